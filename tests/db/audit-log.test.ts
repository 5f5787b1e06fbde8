import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { chainHash, contentDigestOf, GENESIS_HASH, REDACTED, type AuditActor } from "@/lib/model/audit/audit-chain";
import {
  annotateAuditEntry,
  appendAuditEntry,
  auditEntryInsertSql,
  getAuditEntry,
  listAuditEntries,
  verifyAuditChains,
} from "@/lib/stores/audit-log";
import { type AuditEntryInput } from "@/lib/model/audit/audit-chain";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

const agent: AuditActor = { identity: "spiffe://verity.local/agent/worker", kind: "agent" };

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
});
afterAll(async () => t.close());

let taskCounter = 0;
function newTaskId(): string {
  return `audit-task-${++taskCounter}`;
}

function transitioned(taskId: string, toVersion: number, extra: Partial<AuditEntryInput> = {}): AuditEntryInput {
  return {
    action: "task.transitioned",
    actor: agent,
    subject: { type: "task", id: taskId },
    taskId,
    details: { to_version: toVersion },
    ...extra,
  };
}

async function appendMany(taskId: string, n: number): Promise<void> {
  for (let v = 2; v < n + 2; v++) await appendAuditEntry(db, transitioned(taskId, v));
}

/** Runs `statement` the way an attacker with a superuser session would: with the append-only trigger switched off. */
async function asSuperuserWithoutGuard(statement: string, params: unknown[] = []): Promise<void> {
  await t.sql("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
  try {
    await t.sql(statement, params);
  } finally {
    await t.sql("ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only");
  }
}

async function entriesOf(taskId: string) {
  return t.sql<{ id: string; seq: number; prev_hash: string; hash: string }>(
    "SELECT id, seq, prev_hash, hash FROM audit_entries WHERE stream = $1 ORDER BY seq",
    [`task:${taskId}`],
  );
}

async function firstBreakOf(stream: string) {
  const report = await verifyAuditChains(db);
  return report.breaks.find((b) => b.stream === stream) ?? null;
}

describe("appending", () => {
  it("links each task's entries into its own gapless chain", async () => {
    const a = newTaskId();
    const b = newTaskId();
    const first = await appendAuditEntry(db, transitioned(a, 2));
    await appendAuditEntry(db, transitioned(b, 2));
    const second = await appendAuditEntry(db, transitioned(a, 3));
    expect([first.stream, first.seq, first.prevHash]).toEqual([`task:${a}`, 1, GENESIS_HASH]);
    expect([second.seq, second.prevHash]).toEqual([2, first.hash]);
    expect(second.hash).toBe(chainHash(first.hash, 2, contentDigestOf(second)));
    expect((await entriesOf(b)).map((e) => e.seq)).toEqual([1]);
    const stored = await getAuditEntry(db, second.id);
    expect(stored).toEqual(second);
    expect(await firstBreakOf(`task:${a}`)).toBeNull();
    expect(await firstBreakOf(`task:${b}`)).toBeNull();
  });

  it("ignores seq and hashes sent by the writer: the database links every insert", async () => {
    const taskId = newTaskId();
    await appendAuditEntry(db, transitioned(taskId, 2));
    await db.$executeRawUnsafe(
      `INSERT INTO audit_entries (id, stream, seq, at, actor, actor_kind, action, subject_type, subject_id, task_id, details, content_digest, prev_hash, hash)
       VALUES ('aud_forged', $1, 99, now(), 'x', 'system', 'task.transitioned', 'task', $2, $2, '{}', 'd', $3, $3)`,
      `task:${taskId}`,
      taskId,
      "f".repeat(64),
    );
    const rows = await entriesOf(taskId);
    expect(rows.map((r) => r.seq)).toEqual([1, 2]);
    expect(rows[1]!.prev_hash).toBe(rows[0]!.hash);
  });

  it("commits with the transaction it records and vanishes with its rollback", async () => {
    const taskId = newTaskId();
    await appendAuditEntry(db, transitioned(taskId, 2));
    await expect(
      db.$transaction(async (tx) => {
        await appendAuditEntry(tx, transitioned(taskId, 3));
        throw new Error("the business write failed");
      }),
    ).rejects.toThrow("the business write failed");
    await appendAuditEntry(db, transitioned(taskId, 3));
    expect((await entriesOf(taskId)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await firstBreakOf(`task:${taskId}`)).toBeNull();
  });

  it("joins a caller's statement as a CTE, written only when the guarded row was", async () => {
    const taskId = newTaskId();
    const run = (applies: boolean) =>
      db.$executeRaw`
        WITH updated AS (SELECT 1 AS one WHERE ${applies}),
             audited AS (${auditEntryInsertSql(transitioned(taskId, 2), { onlyIfRowsIn: "updated" })} RETURNING 1)
        SELECT count(*) FROM audited`;
    await run(false);
    expect(await entriesOf(taskId)).toEqual([]);
    await run(true);
    expect((await entriesOf(taskId)).map((e) => e.seq)).toEqual([1]);
    expect(() => auditEntryInsertSql(transitioned(taskId, 3), { onlyIfRowsIn: "x; DROP TABLE tasks" })).toThrow(
      /not a CTE name/,
    );
  });

  it("stores no secrets in details", async () => {
    const entry = await appendAuditEntry(db, {
      action: "auth.sign_in_failed",
      actor: { identity: "anonymous", kind: "anonymous" },
      subject: { type: "user", id: "ada" },
      details: { username: "ada", password: "hunter2" },
    });
    expect(entry.stream).toBe("auth");
    const [row] = await t.sql<{ details: unknown }>("SELECT details FROM audit_entries WHERE id = $1", [entry.id]);
    expect(row?.details).toEqual({ username: "ada", password: REDACTED });
  });

  it("stores what someone typed even when PostgreSQL would refuse it as is (NUL, a lone surrogate)", async () => {
    const typed = "ada\u0000\ud800";
    const entry = await appendAuditEntry(db, {
      action: "auth.sign_in_failed",
      actor: { identity: "anonymous", kind: "anonymous" },
      subject: { type: "user", id: typed },
      details: { username: typed },
    });
    expect(await getAuditEntry(db, entry.id)).toMatchObject({
      subjectId: "ada\ufffd",
      details: { username: "ada\ufffd" },
    });
    expect(await firstBreakOf("auth")).toBeNull();
  });
});

describe("append-only, enforced by the database", () => {
  it("refuses UPDATE, DELETE and TRUNCATE of entries and any change to stream heads", async () => {
    const taskId = newTaskId();
    const entry = await appendAuditEntry(db, transitioned(taskId, 2));
    await expect(t.sql("UPDATE audit_entries SET actor = 'mallory' WHERE id = $1", [entry.id])).rejects.toThrow(
      /append-only: UPDATE refused/,
    );
    await expect(t.sql("DELETE FROM audit_entries WHERE id = $1", [entry.id])).rejects.toThrow(
      /append-only: DELETE refused/,
    );
    await expect(t.sql("TRUNCATE audit_entries")).rejects.toThrow(/append-only: TRUNCATE refused/);
    await expect(t.sql("UPDATE audit_streams SET last_seq = 0 WHERE stream = $1", [entry.stream])).rejects.toThrow(
      /only by the audit_entries chain trigger/,
    );
    await expect(t.sql("DELETE FROM audit_streams WHERE stream = $1", [entry.stream])).rejects.toThrow(
      /only by the audit_entries chain trigger/,
    );
    await expect(t.sql("INSERT INTO audit_anchors VALUES ($1, 1, 'x', now(), 'e')", [entry.stream])).rejects.toThrow(
      /only by audit_cut_stream/,
    );
    // Through the application's own client, too.
    await expect(db.auditEntry.update({ where: { id: entry.id }, data: { actor: "mallory" } })).rejects.toThrow(
      /append-only/,
    );
    await expect(db.auditEntry.deleteMany({ where: { id: entry.id } })).rejects.toThrow(/append-only/);
    expect(await getAuditEntry(db, entry.id)).toEqual(entry);
  });
});

describe("verification finds tampering and names the first broken link", () => {
  it("an edited row", async () => {
    const taskId = newTaskId();
    await appendMany(taskId, 4);
    const rows = await entriesOf(taskId);
    await asSuperuserWithoutGuard(`UPDATE audit_entries SET details = '{"to_version": 99}' WHERE id = $1`, [
      rows[2]!.id,
    ]);
    const found = await firstBreakOf(`task:${taskId}`);
    expect(found).toMatchObject({ stream: `task:${taskId}`, seq: 3, entryId: rows[2]!.id, kind: "entry_edited" });
    expect(found?.expected).not.toBe(found?.found);
    const report = await verifyAuditChains(db);
    expect(report.ok).toBe(false);
    expect(report.firstBreak).not.toBeNull();
  });

  it("an edited row whose digest and hash were recomputed to match", async () => {
    const taskId = newTaskId();
    await appendMany(taskId, 4);
    const [entry2] = await t.sql<{ id: string }>("SELECT id FROM audit_entries WHERE stream = $1 AND seq = 2", [
      `task:${taskId}`,
    ]);
    const original = (await getAuditEntry(db, entry2!.id))!;
    const forged = { ...original, actor: "spiffe://verity.local/agent/mallory" };
    const digest = contentDigestOf(forged);
    const hash = chainHash(original.prevHash, 2, digest);
    await asSuperuserWithoutGuard("UPDATE audit_entries SET actor = $1, content_digest = $2, hash = $3 WHERE id = $4", [
      forged.actor,
      digest,
      hash,
      original.id,
    ]);
    const rows = await entriesOf(taskId);
    expect(await firstBreakOf(`task:${taskId}`)).toMatchObject({
      seq: 3,
      entryId: rows[2]!.id,
      kind: "link_broken",
      expected: hash,
      found: original.hash,
    });
  });

  it("a deleted row, and a deleted tail", async () => {
    const taskId = newTaskId();
    await appendMany(taskId, 5);
    const rows = await entriesOf(taskId);
    await asSuperuserWithoutGuard("DELETE FROM audit_entries WHERE id = $1", [rows[1]!.id]);
    expect(await firstBreakOf(`task:${taskId}`)).toMatchObject({
      seq: 3,
      entryId: rows[2]!.id,
      kind: "entries_missing",
      expected: "seq 2",
      found: "seq 3",
    });

    const other = newTaskId();
    await appendMany(other, 3);
    const tail = (await entriesOf(other))[2]!;
    await asSuperuserWithoutGuard("DELETE FROM audit_entries WHERE id = $1", [tail.id]);
    expect(await firstBreakOf(`task:${other}`)).toMatchObject({
      seq: 3,
      entryId: null,
      kind: "entries_missing",
      expected: "seq 3",
      found: "seq 2",
    });
  });

  it("an inserted row: past the head, or in the middle with the rest renumbered", async () => {
    const taskId = newTaskId();
    await appendMany(taskId, 3);
    const rows = await entriesOf(taskId);
    const stream = `task:${taskId}`;
    // A well-formed entry, linked and hashed correctly, inserted with every trigger off.
    const content = {
      id: "aud_inserted_tail",
      stream,
      at: new Date(),
      actor: "spiffe://verity.local/agent/mallory",
      actorKind: "agent" as const,
      action: "task.transitioned",
      subjectType: "task",
      subjectId: taskId,
      taskId,
      details: {},
    };
    const digest = contentDigestOf(content);
    const insert = async (c: typeof content, seq: number, prev: string) => {
      await t.sql("SET session_replication_role = replica");
      try {
        await t.sql(
          `INSERT INTO audit_entries (tenant_id, id, stream, seq, at, actor, actor_kind, action, subject_type, subject_id, task_id, details, content_digest, prev_hash, hash)
           VALUES ('default', $1, $2, $3, $4, $5, 'agent', $6, $7, $8, $9, '{}', $10, $11, $12)`,
          [
            c.id,
            c.stream,
            seq,
            c.at.toISOString(),
            c.actor,
            c.action,
            c.subjectType,
            c.subjectId,
            c.taskId,
            contentDigestOf(c),
            prev,
            chainHash(prev, seq, contentDigestOf(c)),
          ],
        );
      } finally {
        await t.sql("SET session_replication_role = origin");
      }
    };
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    await insert(content, 4, rows[2]!.hash);
    expect(await firstBreakOf(stream)).toMatchObject({
      seq: 4,
      entryId: "aud_inserted_tail",
      kind: "entry_unexpected",
    });

    const middle = newTaskId();
    await appendMany(middle, 3);
    const mrows = await entriesOf(middle);
    const mstream = `task:${middle}`;
    // Make room at seq 2 by moving the later entries up, then slot the forgery in.
    await t.sql("SET session_replication_role = replica");
    try {
      await t.sql("UPDATE audit_entries SET seq = seq + 10 WHERE stream = $1 AND seq >= 2", [mstream]);
      await t.sql("UPDATE audit_entries SET seq = seq - 9 WHERE stream = $1 AND seq >= 12", [mstream]);
    } finally {
      await t.sql("SET session_replication_role = origin");
    }
    await insert(
      { ...content, id: "aud_inserted_middle", stream: mstream, subjectId: middle, taskId: middle },
      2,
      mrows[0]!.hash,
    );
    expect(await firstBreakOf(mstream)).toMatchObject({ seq: 3, entryId: mrows[1]!.id, kind: "link_broken" });
  });
});

describe("annotations", () => {
  it("correct an entry by a new linked entry; the original stays as written", async () => {
    const taskId = newTaskId();
    const original = await appendAuditEntry(db, transitioned(taskId, 2));
    const auditor: AuditActor = { identity: "spiffe://verity.local/user/auditor", kind: "user" };
    const note = await annotateAuditEntry(
      db,
      {
        entry_id: original.id,
        note: "Recorded under the wrong agent.",
        correction: { actor: "spiffe://verity.local/agent/other" },
      },
      auditor,
    );
    expect(note).toMatchObject({
      action: "annotation.added",
      stream: original.stream,
      seq: 2,
      prevHash: original.hash,
      subjectId: original.id,
    });
    expect(note.details).toMatchObject({ annotates: { id: original.id, seq: 1, hash: original.hash } });
    expect(await getAuditEntry(db, original.id)).toEqual(original);
    await expect(annotateAuditEntry(db, { entry_id: "aud_nope", note: "x" }, auditor)).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(annotateAuditEntry(db, { entry_id: original.id, note: "" }, auditor)).rejects.toMatchObject({
      code: "validation_failed",
    });
  });
});

describe("listing a range", () => {
  it("filters by task, actor, action and time, and pages by keyset without repeats", async () => {
    const taskId = newTaskId();
    const base = Date.UTC(2025, 5, 1);
    const other: AuditActor = { identity: "spiffe://verity.local/user/operator", kind: "user" };
    for (let i = 0; i < 7; i++) {
      await appendAuditEntry(
        db,
        transitioned(taskId, i + 2, { at: new Date(base + i * 1000), actor: i % 2 ? other : agent }),
      );
    }
    // An execution of the task: its own chain, still part of the task's history.
    await appendAuditEntry(db, {
      action: "execution.sent",
      actor: agent,
      subject: { type: "execution", id: `ex-${taskId}` },
      taskId,
      at: new Date(base + 7000),
    });
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await listAuditEntries(db, { task: taskId }, { cursor, limit: 3 });
      ids.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).toHaveLength(8);
    expect(new Set(ids).size).toBe(8);
    expect((await listAuditEntries(db, { task: taskId, actor: other.identity })).items).toHaveLength(3);
    expect(
      (await listAuditEntries(db, { task: taskId, from: new Date(base + 2000), to: new Date(base + 5000) })).items.map(
        (e) => e.seq,
      ),
    ).toEqual([3, 4, 5]);
    expect((await listAuditEntries(db, { task: taskId, action: "task.created" })).items).toEqual([]);
    expect(
      (await listAuditEntries(db, { task: taskId, action: "execution.sent" })).items.map((e) => [e.stream, e.seq]),
    ).toEqual([[`execution:ex-${taskId}`, 1]]);
    await expect(listAuditEntries(db, {}, { cursor: "garbage" })).rejects.toMatchObject({ code: "validation_failed" });
  });
});
