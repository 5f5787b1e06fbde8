import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { scopedPglite, type PgliteSession } from "@/lib/db/tenant-sessions";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTenant } from "@/lib/stores/tenants";
import { inject } from "vitest";
import { pgliteHandle, type DatabaseHandle, type Db } from "@/lib/db/client";
import { isSealed } from "@/lib/core/envelope-encryption";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { getInstructionLedger, recordInstruction } from "@/lib/stores/instructions";
import {
  destroyDataKeys,
  forgetUnwrappedDataKeys,
  listDataKeys,
  rotateDataKey,
  rotateKeyEncryptionKey,
} from "@/lib/stores/data-keys";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { verifyCheckpoint } from "@/lib/use-cases/checkpoints/verify-checkpoint";
import { exportCheckpoint } from "@/lib/use-cases/checkpoints/export-checkpoint";
import { getCheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import type { Actor } from "@/lib/model/actor";
import { getEnv } from "@/lib/config/env";
import { getExecution, listExecutionEvents } from "@/lib/stores/execution-store";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { reconcileExecution, reconcilerActor } from "@/lib/use-cases/reconciliation/reconciler";
import { listReviews } from "@/lib/use-cases/reviews/list-reviews";
import { getReview } from "@/lib/use-cases/reviews/get-review";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getAlert } from "@/lib/use-cases/alerts/alert-queries";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import { AuditSearchSchema, searchAuditEntries } from "@/lib/use-cases/audit/audit-search";
import { readableAuditEntries } from "@/lib/use-cases/audit/readable-audit-entries";
import {
  agent,
  alice,
  connectorsFor,
  lostAnswer,
  refund,
  refundExecution,
  runningTask,
  unreachable,
} from "@/tests/helpers/effects";
import { sandbox } from "@/tests/sandbox/helpers";
import { filesHolding, tablesHolding } from "@/tests/helpers/at-rest-search";

/**
 * Encryption at rest on a database in a folder, as `npm start` keeps it:
 * instruction words are sealed under the tenant's data key, open for whoever
 * reads the ledger, survive key rotations, fail loudly without their keys,
 * and leave no plaintext copy in any table or in the database's files.
 */

const folder = mkdtempSync(path.join(tmpdir(), "verity-encryption-"));
const keyringFile = path.join(folder, "keys", "keyring.json");
// Read once by lib/config/env.ts, at the first use (after this line).
process.env.VERITY_KEYRING_FILE = keyringFile;

const operator: Actor = { identity: "spiffe://verity.local/user/operator", kind: "user" };
const system: Actor = { identity: "spiffe://verity.local/system/keys-test", kind: "system" };

let pglite: PGlite;
let handle: DatabaseHandle;
/** The owner's session of that PGlite: the byte search reads every tenant's rows, and CHECKPOINT is the owner's. */
let owner: PgliteSession;
let db: Db;

const ownerSql = async <T>(text: string, params: unknown[] = []): Promise<T[]> =>
  (await owner.query<T>(text, params)).rows;

async function openFolderDatabase(): Promise<void> {
  pglite = new PGlite({
    dataDir: path.join(folder, "pglite"),
    loadDataDir: new Blob([await readFile(inject("pgliteTemplatePath"))]),
  });
  await pglite.waitReady;
  handle = pgliteHandle(pglite);
  db = handle.db;
  owner = scopedPglite(pglite).owner;
}

beforeAll(async () => {
  await openFolderDatabase();
  await registerBuiltInWorkflows(db);
  await registerBuiltInTools(db);
});

afterAll(async () => {
  await handle.close();
  rmSync(folder, { recursive: true, force: true });
});

async function storedTexts(taskId: string): Promise<string[]> {
  const rows = await owner.query<{ text: string }>(
    "SELECT text FROM task_instructions WHERE task_id = $1 ORDER BY seq",
    [taskId],
  );
  return rows.rows.map((r) => r.text);
}

describe("instruction words at rest", () => {
  it("are sealed in the ledger and its audit entries, and read back as written", async () => {
    const task = await runningTask(db);
    const words = "Customer Ada Lovelace (cus_5071) asked to hold refund 7781";
    const recorded = await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "forbid", text: words, expected_seq: 0 },
      operator,
    );
    expect(recorded.instruction.text).toBe(words);

    const [stored] = await storedTexts(task.id);
    expect(isSealed(stored)).toBe(true);
    expect(stored).not.toContain("Ada");
    const audit = await owner.query<{ details: { text: string } }>(
      "SELECT details FROM audit_entries WHERE action = 'instruction.recorded' AND task_id = $1",
      [task.id],
    );
    expect(isSealed(audit.rows[0]!.details.text)).toBe(true);

    const ledger = await getInstructionLedger(db, task.id);
    expect(ledger.items[0]!.text).toBe(words);
    // The audit chain covers what is stored, the sealed form: it verifies without any key.
    expect((await verifyAuditChains(db)).ok).toBe(true);
  });

  it("leave no plaintext copy in any table or in the database's files, even when the guard freezes a call on them", async () => {
    const task = await runningTask(db);
    const allowWords = "Refund approved by Grace Hopper on the phone, ticket 99812";
    const forbidWords = "Stop: Grace Hopper withdrew the refund request 99812";
    const allow = await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "allow", text: allowWords, expected_seq: 0 },
      operator,
    );
    await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "forbid", text: forbidWords, expected_seq: 1 },
      operator,
    );
    // The agent relies on the superseded approval: frozen, with a review and a transition saying why.
    const frozen = await recordIntent(
      db,
      task.id,
      {
        tool_call_id: "refund",
        tool: "payments.refund",
        request: refund,
        expected_version: task.version,
        instruction_id: allow.instruction.id,
      },
      agent,
    );
    expect(frozen.execution.status).toBe("NEEDS_HUMAN");

    const tables = await owner.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    expect(tables.rows.length).toBeGreaterThan(25);
    for (const { table_name } of tables.rows) {
      for (const needle of ["Grace Hopper", "99812"]) {
        const hits = await owner.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${table_name}" t WHERE t::text LIKE $1`,
          [`%${needle}%`],
        );
        expect(hits.rows[0]!.n, `${table_name} holds "${needle}"`).toBe(0);
      }
    }

    // The files themselves: every page written to the folder, the write-ahead log included.
    await owner.query("CHECKPOINT");
    expect(filesHolding(path.join(folder, "pglite"), "Grace Hopper")).toEqual([]);
    expect(filesHolding(path.join(folder, "pglite"), "withdrew the refund")).toEqual([]);
  });
});

describe("checkpoint payloads at rest", () => {
  it("are sealed whole; the signature covers the plaintext, so they verify and export as before", async () => {
    const task = await runningTask(db);
    const moved = await transitionTask(
      db,
      task.id,
      {
        expected_version: task.version,
        patch: { artifacts: { review_report: "Refund for Katherine Johnson approved" } },
      },
      agent,
    );
    const { checkpoint } = await createCheckpoint(db, task.id, { expected_version: moved.task.version }, agent);
    const stored = await owner.query<{ payload: string }>("SELECT payload FROM checkpoints WHERE id = $1", [
      checkpoint.id,
    ]);
    expect(isSealed(stored.rows[0]!.payload)).toBe(true);
    const inTable = await owner.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM checkpoints c WHERE c::text LIKE '%Katherine Johnson%'",
    );
    expect(inTable.rows[0]!.n).toBe(0);
    expect((await verifyCheckpoint(db, checkpoint.id)).ok).toBe(true);
    // Shipped to a standby in the clear and signed: the standby seals it under its own keys.
    const exported = await exportCheckpoint(db, checkpoint.id);
    expect(exported.payload).toContain("Katherine Johnson");
    expect((await getCheckpointDetail(db, checkpoint.id)).document?.state_snapshot.artifacts.review_report).toBe(
      "Refund for Katherine Johnson approved",
    );
  });
});

/**
 * A refund for `customer` whose answer was lost (the provider applied it),
 * frozen for review by the reconciler, approved by a person in `words` and
 * executed again under its key; then an alert quoting what the ledger and
 * the provider hold, as the reconciler raises one on a mismatch.
 */
async function refundFrozenAndDecided(customer: string, words: string) {
  const s = await sandbox();
  const execution = await refundExecution(db, { request: { ...refund, customer_id: customer } });
  await lostAnswer(s.url, execution);
  await recordOutcome(
    db,
    execution.id,
    { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
    agent,
  );
  expect((await reconcileExecution(db, execution.id, unreachable)).action).toBe("needs_human");
  const review = (await listReviews(db)).find((r) => r.executionId === execution.id);
  expect(review?.customerId).toBe(customer);
  const decided = await decideReview(
    db,
    review!.id,
    { expected_version: review!.version, decision: "approve_execute", reason: words },
    alice,
    connectorsFor(s.url),
  );
  expect(decided).toMatchObject({ executed: true, outcome: "succeeded" });
  const alert = await db.$transaction((tx) =>
    raiseDivergence(
      tx,
      {
        taskId: execution.taskId,
        executionId: execution.id,
        kind: "effect_mismatch",
        message: "payments.refund's record differs from the request in customer_id.",
        internal: { request: decided.execution.request },
        external: { record: decided.execution.result },
      },
      reconcilerActor,
    ),
  );
  return { execution, reviewId: review!.id, alertId: alert.id };
}

/** The refund the search test decided: read again once the keys are destroyed. */
let decidedRefund: { executionId: string; taskId: string; reviewId: string; alertId: string } | undefined;

describe("executions, reviews and alerts at rest", () => {
  it("seal a refund's customer and the reviewer's words everywhere they are stored, and read back as written", async () => {
    const customer = `cus_byte_search_${randomBytes(6).toString("hex")}`;
    const words = `Byte search ${randomBytes(6).toString("hex")}: the customer phoned twice`;
    const { execution, reviewId, alertId } = await refundFrozenAndDecided(customer, words);
    decidedRefund = { executionId: execution.id, taskId: execution.taskId, reviewId, alertId };

    // Callers and pages see the plaintext, exactly as before.
    const view = await getExecution(db, execution.id);
    expect(view?.request).toMatchObject({ customer_id: customer });
    expect(view?.result).toMatchObject({ customer_id: customer });
    expect((await listExecutionEvents(db, execution.id)).some((e) => e.reason?.includes(words))).toBe(true);
    const review = await getReview(db, reviewId);
    expect(review?.customerId).toBe(customer);
    expect(review?.decisions.map((d) => d.reason)).toEqual([words]);
    expect((await getAlert(db, alertId))?.internal).toMatchObject({ request: { customer_id: customer } });
    const audit = await searchAuditEntries(db, AuditSearchSchema.parse({ task: execution.taskId }), { limit: 500 });
    const readable = JSON.stringify(await readableAuditEntries(db, audit.items));
    expect(readable).toContain(words);
    expect(readable).toContain(customer);

    // Stored sealed, the audit entries quoting the sealed form.
    const stored = await owner.query<{ request: unknown; customer_id: string; reason: string }>(
      `SELECT x.request, r.customer_id, d.reason FROM executions x
         JOIN reviews r ON r.execution_id = x.id JOIN review_decisions d ON d.review_id = r.id WHERE x.id = $1`,
      [execution.id],
    );
    expect(isSealed(stored.rows[0]!.request)).toBe(true);
    expect(isSealed(stored.rows[0]!.customer_id)).toBe(true);
    expect(isSealed(stored.rows[0]!.reason)).toBe(true);
    expect((await verifyAuditChains(db)).ok).toBe(true);

    expect(await tablesHolding(ownerSql, [customer, words])).toEqual([]);
    await owner.query("CHECKPOINT");
    expect(filesHolding(path.join(folder, "pglite"), customer)).toEqual([]);
    expect(filesHolding(path.join(folder, "pglite"), words)).toEqual([]);
  });

  it("with VERITY_ENCRYPTION_AT_REST=off, the same search finds both: the search can fail", async () => {
    const customer = `cus_byte_search_${randomBytes(6).toString("hex")}`;
    const words = `Byte search ${randomBytes(6).toString("hex")}: the customer phoned twice`;
    // The configuration is read once per process (lib/config/env.ts): flipped on the cached value for this test only.
    const env = getEnv();
    env.VERITY_ENCRYPTION_AT_REST = "off";
    try {
      await refundFrozenAndDecided(customer, words);
    } finally {
      env.VERITY_ENCRYPTION_AT_REST = "on";
    }
    const found = await tablesHolding(ownerSql, [customer, words]);
    for (const table of [
      "executions",
      "execution_events",
      "reviews",
      "review_decisions",
      "divergence_alerts",
      "audit_entries",
    ])
      expect(
        found.some((f) => f.startsWith(`${table} holds`)),
        `${table} in ${found.join("; ")}`,
      ).toBe(true);
    await owner.query("CHECKPOINT");
    expect(filesHolding(path.join(folder, "pglite"), customer)).not.toEqual([]);
    expect(filesHolding(path.join(folder, "pglite"), words)).not.toEqual([]);
  });
});

describe("keys", () => {
  it("rotate without losing what older keys sealed: a new data key seals new words, a new key-encryption key re-wraps them all", async () => {
    const task = await runningTask(db);
    const before = await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "note", text: "sealed under the first key", expected_seq: 0 },
      operator,
    );
    const rotated = await rotateDataKey(db, "default", system);
    expect(rotated).toMatchObject({ version: 2, active: true });
    await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "note", text: "sealed under the second key", expected_seq: 1 },
      operator,
    );
    const [first, second] = await storedTexts(task.id);
    expect(first!.split(".")[1]).not.toBe(second!.split(".")[1]);

    const { rewrapped } = await rotateKeyEncryptionKey(db, "default", system);
    expect(rewrapped).toBe(2);
    const keys = await listDataKeys(db, "default");
    expect(new Set(keys.map((k) => k.kekId))).toEqual(new Set(["kek-default-2"]));
    expect(keys.map((k) => k.active)).toEqual([true, false]);

    // As a new process would: unwrapped only from the keyring and the database.
    forgetUnwrappedDataKeys();
    const ledger = await getInstructionLedger(db, task.id);
    expect(ledger.items.map((i) => i.text)).toEqual(["sealed under the second key", "sealed under the first key"]);
    expect(before.instruction.text).toBe("sealed under the first key");
  });

  it("that cannot be read give a clear error, never plaintext, and nothing new is written", async () => {
    const task = await runningTask(db);
    await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "note", text: "kept", expected_seq: 0 },
      operator,
    );
    const keyring = readFileSync(keyringFile);
    try {
      writeFileSync(keyringFile, "{ not json");
      forgetUnwrappedDataKeys();
      await expect(getInstructionLedger(db, task.id)).rejects.toMatchObject({
        code: "key_unavailable",
        message: expect.stringContaining("is not a valid keyring file"),
      });
      await expect(
        recordInstruction(db, task.id, { topic: "refund", directive: "note", text: "new", expected_seq: 1 }, operator),
      ).rejects.toMatchObject({ code: "key_unavailable" });
      expect(await storedTexts(task.id)).toHaveLength(1);

      rmSync(keyringFile);
      forgetUnwrappedDataKeys();
      await expect(getInstructionLedger(db, task.id)).rejects.toMatchObject({
        code: "key_unavailable",
        message: expect.stringContaining("restore it from its backup"),
      });
    } finally {
      writeFileSync(keyringFile, keyring, { mode: 0o600 });
    }
    expect((await getInstructionLedger(db, task.id)).items[0]!.text).toBe("kept");
  });

  it("destroyed make every sealed value unreadable (crypto-shredding) while the audit chain still verifies", async () => {
    const task = await runningTask(db);
    await recordInstruction(
      db,
      task.id,
      { topic: "refund", directive: "note", text: "to be shredded", expected_seq: 0 },
      operator,
    );
    const { destroyed } = await destroyDataKeys(db, "default", system);
    expect(destroyed).toBe(2);
    await expect(getInstructionLedger(db, task.id)).rejects.toMatchObject({
      code: "key_unavailable",
      message: expect.stringContaining("was destroyed"),
    });
    expect((await listDataKeys(db, "default")).every((k) => k.destroyedAt !== null)).toBe(true);
    const wrapped = await owner.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM data_keys WHERE wrapped_key IS NOT NULL",
    );
    expect(wrapped.rows[0]!.n).toBe(0);
    const entries = await owner.query<{ action: string }>(
      "SELECT action FROM audit_entries WHERE subject_type = 'data_keys' ORDER BY at, seq",
    );
    expect(entries.rows.map((r) => r.action)).toEqual([
      "keys.data_key_created",
      "keys.data_key_rotated",
      "keys.kek_rotated",
      "keys.destroyed",
    ]);
    expect((await verifyAuditChains(db)).ok).toBe(true);

    // Where a person or a caller looks, a shredded value is said to be unreadable; nothing fails.
    const unreadable = expect.stringContaining("[sealed value, unreadable: ");
    const refundRead = decidedRefund!;
    const execution = await getExecution(db, refundRead.executionId);
    expect(execution).toMatchObject({ request: unreadable, result: unreadable, evidence: unreadable });
    expect((await listExecutionEvents(db, refundRead.executionId)).at(-1)?.reason).toEqual(unreadable);
    const review = await getReview(db, refundRead.reviewId);
    expect(review).toMatchObject({ reason: unreadable, customerId: unreadable });
    expect(review?.decisions[0]?.reason).toEqual(unreadable);
    expect((await getAlert(db, refundRead.alertId))?.internal).toEqual(unreadable);
    const audit = await searchAuditEntries(db, AuditSearchSchema.parse({ task: refundRead.taskId }), { limit: 500 });
    expect(JSON.stringify(await readableAuditEntries(db, audit.items))).toContain("[sealed value, unreadable: ");
  });

  it("destroyed by another server stop opening here too, within a minute (docs/scale-out.md)", async () => {
    await createTenant(handle.platformDb, { id: "shred-elsewhere", name: "shred-elsewhere" }, system);
    const other = handle.forTenant("shred-elsewhere");
    await registerBuiltInWorkflows(other);
    const task = await runningTask(other);
    await recordInstruction(
      other,
      task.id,
      { topic: "refund", directive: "note", text: "shredded elsewhere", expected_seq: 0 },
      operator,
    );
    expect((await getInstructionLedger(other, task.id)).items[0]!.text).toBe("shredded elsewhere");
    // Another server's destroyDataKeys: the rows change, this process's cache is not told.
    await ownerSql("UPDATE data_keys SET wrapped_key = NULL, destroyed_at = now() WHERE tenant_id = 'shred-elsewhere'");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 61_000 });
    try {
      await expect(getInstructionLedger(other, task.id)).rejects.toMatchObject({ code: "key_unavailable" });
    } finally {
      vi.useRealTimers();
    }
  });
});
