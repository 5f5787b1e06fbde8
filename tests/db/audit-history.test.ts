import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendAuditEntry, verifyAuditChains, verifyAuditStreams, type AuditEntry } from "@/lib/stores/audit-log";
import {
  countAuditEntries,
  listTaskHistory,
  taskAuditStreams,
  TaskHistoryQuerySchema,
  taskHistorySearch,
  type TaskHistoryQuery,
} from "@/lib/use-cases/audit/audit-search";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { describeAuditEntry, describeVerification } from "@/lib/adapters/console/audit/audit-format";
import { parseTaskHistoryParams } from "@/lib/adapters/console/audit/audit-query";
import { agent, refundExecution } from "@/tests/helpers/effects";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * A task's merged history (lib/use-cases/audit/audit-search.ts listTaskHistory) and
 * the verified badge's stream-set verification (verifyAuditStreams), on a
 * real migrated PGlite, with every entry written by the engine or by
 * appendAuditEntry through the chain trigger.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await openTestPglite();
});
afterAll(async () => t.close());

const q = (input: Record<string, unknown> = {}): TaskHistoryQuery => TaskHistoryQuerySchema.parse(input);

/** Every entry of the task, paged through to the end. */
async function allPages(taskId: string, query: Partial<TaskHistoryQuery> = {}, limit = 3): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listTaskHistory(t.db, taskId, { ...q(), ...query, limit, cursor });
    out.push(...page.items);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}

const key = (e: AuditEntry) => [e.at.getTime(), e.stream, e.seq] as const;
function compare(a: AuditEntry, b: AuditEntry): number {
  const [x, y] = [key(a), key(b)];
  return x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) || x[2] - y[2];
}

/**
 * A refund task (created, moved to RUNNING, intent recorded and sent: the
 * engine's own entries in the task's and the execution's chains), then a
 * review of that execution and two in-place updates: one history across
 * three chains.
 */
async function taskWithMergedHistory() {
  const execution = await refundExecution(t.db);
  await appendAuditEntry(t.db, {
    action: "review.opened",
    actor: { identity: "system:reconciler", kind: "system" },
    subject: { type: "review", id: `rev-${execution.id}` },
    taskId: execution.taskId,
    details: { execution_id: execution.id, round: 1, reason: "nobody can tell" },
  });
  let version = (await t.db.task.findFirstOrThrow({ where: { id: execution.taskId } })).version;
  for (const tokens of [100, 200]) {
    version = (
      await transitionTask(
        t.db,
        execution.taskId,
        { expected_version: version, patch: { budget: { tokens_spent: tokens } } },
        agent,
      )
    ).task.version;
  }
  return { taskId: execution.taskId, execution };
}

describe("a task's history", () => {
  it("merges the task's, its execution's and its review's chains in commit order, oldest or newest first", async () => {
    const { taskId } = await taskWithMergedHistory();
    const oldest = await allPages(taskId, { order: "asc" });
    const streams = new Set(oldest.map((e) => e.stream));
    expect([...streams].map((x) => x.split(":")[0]).sort()).toEqual(["checkpoint", "execution", "review", "task"]);
    expect(oldest.map((e) => e.action)).toEqual([
      "task.created",
      "task.transitioned",
      "task.transitioned",
      "task.transitioned",
      // recordIntent of an irreversible tool: the checkpoint, the task's move to WAITING_FOR_TOOL and the intent, one transaction.
      "checkpoint.created",
      "task.transitioned",
      "execution.intent_recorded",
      "execution.sent",
      "review.opened",
      "task.transitioned",
      "task.transitioned",
    ]);
    expect([...oldest].sort(compare)).toEqual(oldest);
    const newest = await allPages(taskId, { order: "desc" });
    expect(newest).toEqual([...oldest].reverse());
    expect(await countAuditEntries(t.db, taskHistorySearch(taskId, q()))).toBe(oldest.length);
  });

  it("keeps keyset pages stable while entries are appended between them", async () => {
    const { taskId } = await taskWithMergedHistory();
    const before = await allPages(taskId, { order: "asc" });
    // Oldest first: the first page, then new entries, then the rest: nothing repeats, the new ones come last.
    const first = await listTaskHistory(t.db, taskId, q({ order: "asc", limit: 4 }));
    const newest = await listTaskHistory(t.db, taskId, q({ order: "desc", limit: 4 }));
    let version = (await t.db.task.findFirstOrThrow({ where: { id: taskId } })).version;
    for (const tokens of [300, 400])
      version = (
        await transitionTask(
          t.db,
          taskId,
          { expected_version: version, patch: { budget: { tokens_spent: tokens } } },
          agent,
        )
      ).task.version;
    const rest: AuditEntry[] = [];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await listTaskHistory(t.db, taskId, q({ order: "asc", limit: 4, cursor }));
      rest.push(...page.items);
      cursor = page.nextCursor;
    }
    const ids = [...first.items, ...rest].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, before.length)).toEqual(before.map((e) => e.id));
    expect(ids).toHaveLength(before.length + 2);
    // Newest first: the next page continues strictly below its cursor; the two new entries are above it.
    const older = await listTaskHistory(t.db, taskId, q({ order: "desc", limit: 4, cursor: newest.nextCursor! }));
    expect(older.items.map((e) => e.id)).toEqual(
      [...before]
        .reverse()
        .slice(4, 8)
        .map((e) => e.id),
    );
  });

  it("filters by kind of event, actor and time window", async () => {
    const { taskId, execution } = await taskWithMergedHistory();
    const all = await allPages(taskId, { order: "asc" }, 100);
    const executions = await allPages(taskId, { order: "asc", kind: ["execution"] });
    expect(executions.map((e) => e.action)).toEqual(["execution.intent_recorded", "execution.sent"]);
    expect(executions.every((e) => e.stream === `execution:${execution.id}`)).toBe(true);
    const reviewsAndExecutions = await allPages(taskId, { kind: ["review", "execution"] });
    expect(reviewsAndExecutions.map((e) => e.action).sort()).toEqual([
      "execution.intent_recorded",
      "execution.sent",
      "review.opened",
    ]);
    expect((await allPages(taskId, { actor: "system:reconciler" })).map((e) => e.action)).toEqual(["review.opened"]);
    const cut = all[3]!;
    const window = await allPages(taskId, { from: cut.at, to: all[all.length - 1]!.at });
    expect(window.length).toBeGreaterThan(0);
    expect(window.every((e) => e.at >= cut.at && e.at < all[all.length - 1]!.at)).toBe(true);
    expect(window.length).toBe(all.filter((e) => e.at >= cut.at && e.at < all[all.length - 1]!.at).length);
  });

  it("refuses bad filters in words", () => {
    const bad = parseTaskHistoryParams({ order: "sideways", kind: "transition,nonsense", from: "yesterday" });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.errors).toEqual(
      expect.arrayContaining([
        { field: "order", message: 'Order: Invalid option: expected one of "asc"|"desc"' },
        { field: "kind", message: "Kind of event: unknown kind of event" },
        { field: "from", message: "From: must be a date and time, e.g. 2026-11-30T14:00 (UTC)" },
      ]),
    );
    const backwards = parseTaskHistoryParams({ from: "2026-11-30T12:00", to: "2026-11-30T11:00" });
    expect(backwards).toEqual({ ok: false, errors: [{ field: "to", message: "To: must be later than From" }] });
    const local = parseTaskHistoryParams({ from: "2026-11-30T12:00" });
    expect(local.ok && local.query.from?.toISOString()).toBe("2026-11-30T12:00:00.000Z");
  });

  it("describes each row in words, with from → to and links to pages that exist", async () => {
    const { taskId } = await taskWithMergedHistory();
    const rows = (await allPages(taskId, { order: "asc" }, 100)).map(describeAuditEntry);
    expect(rows[0]).toMatchObject({
      kind: "transition",
      title: "Task created in RECEIVED",
      toStatus: "RECEIVED",
      toVersion: 1,
    });
    expect(rows[1]).toMatchObject({
      title: "Moved from RECEIVED to PLANNING",
      fromStatus: "RECEIVED",
      toStatus: "PLANNING",
      fromVersion: 1,
      toVersion: 2,
    });
    const review = rows.find((r) => r.action === "review.opened")!;
    expect(review).toMatchObject({ kind: "review", title: "Review opened, round 1", detail: "nobody can tell" });
    expect(review.links[0]!.href).toMatch(/^\/reviews\/rev-/);
    expect(rows.find((r) => r.action === "execution.sent")).toMatchObject({
      kind: "execution",
      title: "payments.refund sent to the provider",
      fromStatus: "INTENT_RECORDED",
      toStatus: "SENT",
    });
    expect(rows[rows.length - 1]).toMatchObject({ title: "Updated in place in WAITING_FOR_TOOL" });
  });
});

describe("verifying a task's chains", () => {
  it("walks exactly the task's streams and finds an edited row in one of them, named in words", async () => {
    const a = await taskWithMergedHistory();
    const b = await taskWithMergedHistory();
    const streamsA = await taskAuditStreams(t.db, a.taskId);
    const checkpoint = await t.db.checkpoint.findFirstOrThrow({ where: { taskId: a.taskId } });
    expect(streamsA).toEqual([
      `checkpoint:${checkpoint.id}`,
      `execution:${a.execution.id}`,
      `review:rev-${a.execution.id}`,
      `task:${a.taskId}`,
    ]);
    const ok = await verifyAuditStreams(t.db, streamsA);
    expect(ok).toMatchObject({ ok: true, streams: 4, firstBreak: null });
    expect(ok.entries).toBe((await allPages(a.taskId, {}, 100)).length);
    expect(describeVerification(ok).headline).toBe(`Verified — 4 streams, ${ok.entries} entries`);

    // A superuser edits the execution's SENT entry with the append-only guard off.
    const [sent] = await t.sql<{ id: string; seq: number }>(
      "SELECT id, seq FROM audit_entries WHERE stream = $1 AND action = 'execution.sent'",
      [`execution:${a.execution.id}`],
    );
    await t.sql("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
    try {
      await t.sql(`UPDATE audit_entries SET actor = 'spiffe://verity.local/user/mallory' WHERE id = $1`, [sent!.id]);
    } finally {
      await t.sql("ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only");
    }
    const broken = await verifyAuditStreams(t.db, streamsA);
    expect(broken.ok).toBe(false);
    expect(broken.firstBreak).toMatchObject({
      stream: `execution:${a.execution.id}`,
      seq: sent!.seq,
      entryId: sent!.id,
      kind: "entry_edited",
    });
    expect(describeVerification(broken).headline).toBe(
      `Broken — Broken at entry ${sent!.id} (seq ${sent!.seq}) of execution:${a.execution.id}: it was changed after it was written.`,
    );
    // The other task's chains are untouched; the whole log agrees on where the break is.
    expect((await verifyAuditStreams(t.db, await taskAuditStreams(t.db, b.taskId))).ok).toBe(true);
    expect((await verifyAuditChains(t.db)).breaks.map((x) => x.entryId)).toEqual([sent!.id]);
  });

  it("counts a stream whose entries were all deleted against its head", async () => {
    const { taskId } = await taskWithMergedHistory();
    const reviewStream = (await taskAuditStreams(t.db, taskId)).find((s) => s.startsWith("review:"))!;
    await t.sql("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
    try {
      await t.sql("DELETE FROM audit_entries WHERE stream = $1", [reviewStream]);
    } finally {
      await t.sql("ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only");
    }
    // The review row does not exist (the entry was appended by hand), so only the head remembers the stream.
    const streams = [...(await taskAuditStreams(t.db, taskId)), reviewStream];
    const report = await verifyAuditStreams(t.db, streams);
    expect(report.firstBreak).toMatchObject({ stream: reviewStream, kind: "entries_missing" });
  });

  it("is empty and fine for no streams", async () => {
    expect(await verifyAuditStreams(t.db, [])).toMatchObject({ ok: true, streams: 0, entries: 0 });
  });
});
