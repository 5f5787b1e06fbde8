import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { parseEnvValues } from "@/lib/config/env";
import { getAuditEntry, verifyAuditChains } from "@/lib/stores/audit-log";
import { grantDelegation } from "@/lib/stores/task-delegations";
import { compareAndSetClaim } from "@/lib/stores/inbox-claims";
import { recordInstruction } from "@/lib/stores/instructions";
import { acquireLease, releaseLease } from "@/lib/stores/leases";
import { dispatchOutbox, enqueueOutbox, receiveEvent } from "@/lib/stores/messaging";
import { casReview, openReview, recordReviewDecision } from "@/lib/stores/review-store";
import { expireLookup, queueLookup } from "@/lib/stores/effect-lookups";
import { insertGraphCheckpoint, insertGraphThread, upsertGraphWrites } from "@/lib/stores/graph-checkpoints";
import { raiseAlert, resolveDivergence } from "@/lib/use-cases/alerts/divergence";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { countTasksByStatus } from "@/lib/use-cases/tasks/task-queries";
import { placeLegalHold, releaseLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { addAnnotation } from "@/lib/use-cases/audit/annotate-audit-entry";
import { applyTaskRetention, taskDataTables, type TaskDataTable } from "@/lib/use-cases/retention/apply-task-retention";
import { agent, alice, runningTask } from "@/tests/helpers/effects";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { retentionWalkCases } from "@/tests/helpers/retention-walk";

/**
 * Task-data retention over every store: a finished task with rows in every
 * table that holds task data, driven through the engine and the owners of
 * those tables, is deleted everywhere in one transaction; a held one and a
 * running one are untouched; the audit log still verifies; the run records
 * itself. The run's clock is put 30 days ahead, so what was written now is
 * past a 30-day cutoff without waiting (the database still refuses a cutoff
 * in its own future).
 */

const engineer: Actor = { identity: "spiffe://verity.local/user/engineer", kind: "user" };
const admin: Actor = { identity: "spiffe://verity.local/user/admin", kind: "user" };
const day = 86_400_000;
const thirtyDaysOn = () => Date.now() + 30 * day;

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
});
afterAll(async () => t.close());

interface Fixture {
  taskId: string;
  executionId: string;
  reviewId: string;
}

/** A cancelled refund task with at least one row in every table of `taskDataTables`. */
async function finishedTaskInEveryStore(): Promise<Fixture> {
  const task = await runningTask(db);
  const taskId = task.id;
  await grantDelegation(db, { taskId, identity: "spiffe://verity.local/agent/helper-bot" }, agent);
  // A person took the escalated task from the inbox (a claim on one of its items).
  await compareAndSetClaim(
    db,
    { itemKey: `task:${taskId}`, expectedVersion: 0, claimedBy: alice.identity, taskId },
    alice,
  );
  await recordInstruction(
    db,
    taskId,
    { expected_seq: 0, topic: "refund", directive: "allow", text: "Refund order 42", source: "user" },
    alice,
  );

  // A reversible call, its intent, send and success (the task goes back to RUNNING).
  const intent = await recordIntent(
    db,
    taskId,
    {
      tool_call_id: "note-1",
      tool: "crm.add_note",
      request: { customer_id: "cus_1", text: "refund issued" },
      expected_version: task.version,
    },
    agent,
  );
  if (intent.kind !== "proceed") throw new Error(`intent: ${intent.kind}`);
  const executionId = intent.execution.id;
  await markSent(db, executionId, { attempt_id: intent.execution.attemptId }, agent);
  await recordOutcome(
    db,
    executionId,
    { attempt_id: intent.execution.attemptId, outcome: "succeeded", evidence: { execution_id: executionId } },
    agent,
  );
  const execution = await getExecutionRowOrThrow(db, executionId);

  // A review people decided, an alert a person resolved, a lookup that expired.
  const reviewId = await db.$transaction(async (tx) => {
    const review = await openReview(tx, execution, "check the note", agent);
    const decided = await casReview(tx, review, { status: "REJECTED", decidedAt: new Date() });
    await recordReviewDecision(tx, decided, { round: 1, kind: "reject", reason: "not needed" }, alice);
    return review.id;
  });
  const { alert } = await db.$transaction((tx) =>
    raiseAlert(
      tx,
      {
        taskId,
        executionId,
        kind: "effect_mismatch",
        message: "note differs",
        internal: { text: "a" },
        external: { text: "b" },
      },
      agent,
    ),
  );
  await resolveDivergence(db, alert.id, { expectedVersion: alert.version, resolution: "checked by hand" }, alice);
  await expireLookup(db, await queueLookup(db, execution, new Date(Date.now() + 60_000), agent), agent);

  // An inbound event applied once, an announcement delivered.
  await receiveEvent(
    db,
    { event_id: `evt-${taskId}`, source: "sandbox", type: "note.added", task_id: taskId, payload: { ok: true } },
    async () => ({ applied: true }),
  );
  await db.$transaction((tx) => enqueueOutbox(tx, { task_id: taskId, topic: "review.decided", payload: { taskId } }));

  // A checkpoint, a restore of it, and a stale write refused.
  const now = await db.task.findFirstOrThrow({ where: { id: taskId } });
  const { checkpoint } = await createCheckpoint(db, taskId, { expected_version: now.version }, engineer);
  await restoreCheckpoint(
    db,
    checkpoint.id,
    { expected_version: now.version, reason: "retention test" },
    engineer,
  ).catch(() => undefined); // applied or refused, the attempt is a checkpoint_restores row
  await expect(
    transitionTask(db, taskId, { expected_version: 1, to: "CANCELLED", reason: "stale" }, agent),
  ).rejects.toMatchObject({ code: "version_conflict" });

  // A LangGraph thread's rows.
  await insertGraphThread(db, { taskId, namespace: "retention", threadId: taskId, createdBy: agent.identity });
  await db.$transaction(async (tx) => {
    const value = { type: "json", data: Buffer.from("{}").toString("base64") };
    await insertGraphCheckpoint(tx, {
      taskId,
      checkpointNs: "",
      checkpointId: "cp-1",
      parentCheckpointId: null,
      forkedFrom: null,
      checkpoint: value,
      channelVersions: { messages: "1" },
      metadata: {},
      blobs: [{ channel: "messages", version: "1", value }],
      contentDigest: "0".repeat(64),
      taskVersion: now.version,
      createdBy: agent.identity,
      createdAt: new Date(),
    });
    await upsertGraphWrites(tx, {
      taskId,
      checkpointNs: "",
      checkpointId: "cp-1",
      graphTaskId: "node-1",
      taskPath: "",
      writes: [{ idx: 0, channel: "messages", value }],
      createdBy: agent.identity,
      createdAt: new Date(),
    });
  });

  // A lease taken and given back, then the end.
  const lease = await acquireLease(db, taskId, { ttl_seconds: 60 }, agent);
  await releaseLease(db, taskId, lease.fencingToken, agent);
  const last = await db.task.findFirstOrThrow({ where: { id: taskId } });
  await transitionTask(db, taskId, { expected_version: last.version, to: "CANCELLED", reason: "done" }, agent);
  // Every announcement delivered: an undelivered one would keep the task (it is still owed to a subscriber).
  await dispatchOutbox(db, async () => undefined, { limit: 100 });
  return { taskId, executionId, reviewId };
}

/** Rows of the task in each table, read with plain SQL (not through the code under test). */
async function rowsOf(f: Fixture): Promise<Record<TaskDataTable, number>> {
  const byTask = "task_id = $1";
  const where: Record<TaskDataTable, string> = {
    graph_writes: byTask,
    graph_blobs: byTask,
    graph_checkpoints: byTask,
    graph_threads: byTask,
    task_delegations: byTask,
    inbox_claims: byTask,
    task_instructions: byTask,
    divergence_alerts: byTask,
    effect_lookups: "execution_id = $2",
    review_decisions: "review_id = $3",
    reviews: byTask,
    execution_events: "execution_id = $2",
    executions: byTask,
    inbox_events: byTask,
    outbox_messages: byTask,
    leases: byTask,
    checkpoint_restores: byTask,
    checkpoints: byTask,
    write_conflicts: byTask,
    transitions: byTask,
    tasks: "id = $1",
    // The task's own chains; the shared system stream keeps its prefix (holds, exports, this run).
    audit_entries: "task_id = $1 AND stream NOT IN ('system', 'auth')",
  };
  const counts = {} as Record<TaskDataTable, number>;
  for (const table of taskDataTables) {
    const [row] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE ${where[table]} AND $1::text IS NOT NULL AND $2::text IS NOT NULL AND $3::text IS NOT NULL`,
      [f.taskId, f.executionId, f.reviewId],
    );
    counts[table] = row?.n ?? -1;
  }
  return counts;
}

/** Every table in the schema with a task_id column: a new one must be in taskDataTables (or named here as kept). */
async function tablesWithTaskId(): Promise<string[]> {
  const rows = await t.sql<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'task_id' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

describe("task-data retention", () => {
  let finished: Fixture;
  let held: Fixture;
  let running: { id: string };
  let before: Record<TaskDataTable, number>;

  beforeAll(async () => {
    finished = await finishedTaskInEveryStore();
    held = await finishedTaskInEveryStore();
    running = await runningTask(db);
    await placeLegalHold(db, { task_id: held.taskId, reason: "litigation" }, admin);
    before = await rowsOf(finished);
  });

  it("covers every table that holds a task's data", async () => {
    // Legal holds outlive what they held: the record of a hold is not the task's data.
    const kept = new Set(["audit_legal_holds"]);
    const covered = new Set<string>(taskDataTables);
    expect((await tablesWithTaskId()).filter((name) => !kept.has(name) && !covered.has(name))).toEqual([]);
    // The fixture really has rows everywhere, so "gone" below means deleted.
    for (const table of taskDataTables) expect(before[table], table).toBeGreaterThan(0);
  });

  it("is one transaction: a failure at its last delete leaves every store as it was", async () => {
    await t.sql(`CREATE FUNCTION refuse_task_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test'; END $$`);
    await t.sql(
      "CREATE TRIGGER refuse_task_delete BEFORE DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION refuse_task_delete()",
    );
    try {
      await expect(applyTaskRetention(db, { olderThanDays: 30 }, admin, { clock: thirtyDaysOn })).rejects.toThrow(
        /refused for the test/,
      );
    } finally {
      await t.sql("DROP TRIGGER refuse_task_delete ON tasks");
      await t.sql("DROP FUNCTION refuse_task_delete()");
    }
    expect(await rowsOf(finished)).toEqual(before);
    expect(await verifyAuditChains(db)).toMatchObject({ ok: true });
  });

  it("deletes a finished task everywhere, keeps held and running tasks, verifies, and records itself", async () => {
    const heldBefore = await rowsOf(held);
    const runningBefore = await t.sql("SELECT version, status FROM tasks WHERE id = $1", [running.id]);
    const countsBefore = await countTasksByStatus(db);
    const result = await applyTaskRetention(db, { olderThanDays: 30 }, admin, {
      clock: thirtyDaysOn,
      // Few cuts per entry, so this run records its cuts across several entries.
      cutsPerEntry: 3,
    });

    expect(result.tasks.map((x) => x.id)).toEqual([finished.taskId]);
    expect(result.heldTasks).toEqual([held.taskId]);
    const after = await rowsOf(finished);
    for (const table of taskDataTables) expect(after[table], table).toBe(0);
    expect(result.tasks[0]?.rows).toEqual(before);
    expect(result.rows).toEqual(before);

    expect(await rowsOf(held)).toEqual(heldBefore);
    expect(await t.sql("SELECT version, status FROM tasks WHERE id = $1", [running.id])).toEqual(runningBefore);
    // The kept counts (lib/stores/task-counts.ts) lost the deleted task, and only it.
    const cancelled = (counts: Awaited<ReturnType<typeof countTasksByStatus>>) =>
      counts.find((c) => c.workflow === "agent-task" && c.status === "CANCELLED")?.count ?? 0;
    expect(cancelled(await countTasksByStatus(db))).toBe(cancelled(countsBefore) - 1);
    expect((await countTasksByStatus(db)).reduce((n, c) => n + c.count, 0)).toBe(
      (await t.sql<{ n: number }>("SELECT count(*)::int AS n FROM tasks"))[0]!.n,
    );

    const verification = await verifyAuditChains(db);
    expect(verification.breaks).toEqual([]);
    // Each of the task's streams now starts (and ends) at its anchor.
    const anchors = await t.sql<{ stream: string; entry_id: string }>(
      "SELECT stream, entry_id FROM audit_anchors WHERE stream LIKE $1 OR stream = $2 ORDER BY stream",
      [`%${finished.taskId}%`, `execution:${finished.executionId}`],
    );
    expect(anchors.map((a) => a.stream)).toContain(`task:${finished.taskId}`);
    expect(anchors.map((a) => a.stream)).toContain(`execution:${finished.executionId}`);

    // The run's entry: task ids and counts per store, never what the rows held.
    const entry = await getAuditEntry(db, result.entry!.id);
    expect(entry).toMatchObject({
      action: "audit.retention_applied",
      stream: "system",
      actor: admin.identity,
      details: {
        scope: "task_data",
        older_than_days: 30,
        tasks: [{ id: finished.taskId, status: "CANCELLED", rows: before }],
        rows: before,
        held_tasks: [held.taskId],
      },
    });
    expect(JSON.stringify(entry?.details)).not.toContain("Refund order 42");
    const parts = (entry?.details as { parts: number }).parts;
    expect(parts).toBeGreaterThan(1);
    expect(
      await t.sql("SELECT count(*)::int AS n FROM audit_entries WHERE details->>'run' = $1", [result.entry!.id]),
    ).toEqual([{ n: parts - 1 }]);

    // A second run finds nothing and writes nothing.
    const again = await applyTaskRetention(db, { olderThanDays: 30 }, admin, { clock: thirtyDaysOn });
    expect(again).toMatchObject({ tasks: [], entry: null, heldTasks: [held.taskId] });
  });

  it("keeps what a time-range hold covers, takes an annotation under it, and deletes once it is released", async () => {
    const task = await finishedTaskInEveryStore();
    const hold = await placeLegalHold(
      db,
      {
        from: new Date(Date.now() - 3_600_000).toISOString(),
        to: new Date(Date.now() + 3_600_000).toISOString(),
        reason: "audit period",
      },
      admin,
    );
    const kept = await applyTaskRetention(db, { olderThanDays: 30 }, admin, { clock: thirtyDaysOn });
    expect(kept.tasks).toEqual([]);
    expect(kept.heldTasks).toContain(task.taskId);

    // A correction under the hold: appended to the corrected entry's chain, bound to its hash.
    const [created] = await t.sql<{ id: string; hash: string; stream: string; seq: number }>(
      "SELECT id, hash, stream, seq FROM audit_entries WHERE task_id = $1 AND action = 'task.created'",
      [task.taskId],
    );
    const note = await addAnnotation(
      db,
      { entry_id: created!.id, note: "The intent was entered for the wrong order", task_id: task.taskId },
      alice,
    );
    expect(note).toMatchObject({
      action: "annotation.added",
      stream: created!.stream,
      taskId: task.taskId,
      actor: alice.identity,
      details: { annotates: { id: created!.id, seq: created!.seq, hash: created!.hash } },
    });
    expect((await verifyAuditChains(db)).breaks).toEqual([]);

    await releaseLegalHold(db, hold.id, "period closed", admin);
    const run = await applyTaskRetention(db, { olderThanDays: 30 }, admin, { clock: thirtyDaysOn });
    expect(run.tasks.map((x) => x.id)).toEqual([task.taskId]);
    expect(await getAuditEntry(db, note.id)).toBeNull();
    expect((await verifyAuditChains(db)).breaks).toEqual([]);
  });

  it("keeps a finished task whose last activity is newer than the cutoff", async () => {
    const task = await finishedTaskInEveryStore();
    const run = await applyTaskRetention(db, { olderThanDays: 30 }, admin);
    expect(run.tasks.map((x) => x.id)).not.toContain(task.taskId);
    expect((await rowsOf(task)).tasks).toBe(1);
  });
});

describe("the retention walk", () => {
  retentionWalkCases(
    () => t,
    async (run) => ({ result: await run(), judged: null }),
  );
});

describe("annotations", () => {
  it("are people's, need words and an existing entry of the task named", async () => {
    const task = await runningTask(db);
    const [entry] = await t.sql<{ id: string }>("SELECT id FROM audit_entries WHERE task_id = $1 LIMIT 1", [task.id]);
    await expect(addAnnotation(db, { entry_id: entry!.id, note: "   " }, alice)).rejects.toMatchObject({
      code: "validation_failed",
      details: { errors: [{ field: "note" }] },
    });
    await expect(addAnnotation(db, { entry_id: "aud_nope", note: "x" }, alice)).rejects.toMatchObject({
      code: "not_found",
      details: { errors: [{ field: "entry_id" }] },
    });
    await expect(
      addAnnotation(db, { entry_id: entry!.id, note: "x", task_id: "another-task" }, alice),
    ).rejects.toMatchObject({ code: "validation_failed", details: { errors: [{ field: "entry_id" }] } });
    await expect(addAnnotation(db, { entry_id: entry!.id, note: "x" }, agent)).rejects.toMatchObject({
      code: "forbidden",
    });
    const count = await t.sql(
      "SELECT count(*)::int AS n FROM audit_entries WHERE action = 'annotation.added' AND task_id = $1",
      [task.id],
    );
    expect(count).toEqual([{ n: 0 }]);
  });
});

describe("VERITY_TASK_RETENTION_DAYS", () => {
  it("keeps task data forever when unset or empty, accepts whole days, refuses anything else", () => {
    const unset = parseEnvValues({});
    expect(unset.success && unset.data.VERITY_TASK_RETENTION_DAYS).toBeUndefined();
    const empty = parseEnvValues({ VERITY_TASK_RETENTION_DAYS: "" });
    expect(empty.success && empty.data.VERITY_TASK_RETENTION_DAYS).toBeUndefined();
    const set = parseEnvValues({ VERITY_TASK_RETENTION_DAYS: "365" });
    expect(set.success && set.data.VERITY_TASK_RETENTION_DAYS).toBe(365);
    for (const bad of ["0", "1.5", "a year"]) {
      const parsed = parseEnvValues({ VERITY_TASK_RETENTION_DAYS: bad });
      expect(parsed.error?.issues[0]?.path, bad).toEqual(["VERITY_TASK_RETENTION_DAYS"]);
    }
  });
});
