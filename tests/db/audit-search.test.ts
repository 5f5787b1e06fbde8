import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendAuditEntry, type AuditEntry } from "@/lib/stores/audit-log";
import { verifyAuditExport } from "@/lib/use-cases/audit/audit-export";
import {
  AuditSearchSchema,
  exportAuditSearch,
  searchAuditEntries,
  type AuditSearch,
  type AuditSearchInput,
} from "@/lib/use-cases/audit/audit-search";
import { parseAuditSearchParams } from "@/lib/adapters/console/audit/audit-query";
import { isAppError } from "@/lib/core/errors";
import { alice, refundExecution } from "@/tests/helpers/effects";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * The auditors' search across tasks (searchAuditEntries): each filter on a
 * real migrated PGlite, the execution filters resolved through the
 * executions table, keyset paging, bad input, and the export of a search.
 */

let t: TestDatabase;
let one: { taskId: string; executionId: string; key: string };
let two: { taskId: string; executionId: string; key: string };
beforeAll(async () => {
  t = await openTestPglite();
  for (const slot of [1, 2]) {
    const execution = await refundExecution(t.db);
    // A review of the execution, as the reconciler opens one: it names the execution in its details.
    await appendAuditEntry(t.db, {
      action: "review.opened",
      actor: { identity: "system:reconciler", kind: "system" },
      subject: { type: "review", id: `rev-${execution.id}` },
      taskId: execution.taskId,
      details: { execution_id: execution.id, round: 1, reason: "provider silent" },
    });
    const facts = { taskId: execution.taskId, executionId: execution.id, key: execution.idempotencyKey };
    if (slot === 1) one = facts;
    else two = facts;
  }
  await appendAuditEntry(t.db, {
    action: "auth.signed_in",
    actor: { identity: alice.identity, kind: "user" },
    subject: { type: "user", id: "alice" },
    details: { role: "operator" },
  });
}, 120_000);
afterAll(async () => t.close());

const search = (input: AuditSearchInput): AuditSearch => AuditSearchSchema.parse(input);

async function everything(input: AuditSearchInput, order: "asc" | "desc" = "asc", limit = 2): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | null = null;
  do {
    const page = await searchAuditEntries(t.db, search(input), { cursor, limit, order });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

describe("searching the log across tasks", () => {
  it("pages the same entries oldest first and newest first", async () => {
    const asc = await everything({});
    const desc = await everything({}, "desc", 3);
    expect(asc.length).toBeGreaterThan(10);
    expect(new Set(asc.map((e) => e.id)).size).toBe(asc.length);
    expect(desc.map((e) => e.id)).toEqual([...asc].reverse().map((e) => e.id));
  });

  it("filters by task, actor, action and kind", async () => {
    expect((await everything({ task: one.taskId })).every((e) => e.taskId === one.taskId)).toBe(true);
    expect((await everything({ actor: alice.identity })).map((e) => e.action)).toEqual(["auth.signed_in"]);
    expect((await everything({ action: "execution.sent" })).map((e) => e.subjectId).sort()).toEqual(
      [one.executionId, two.executionId].sort(),
    );
    const kinds = await everything({ kind: "review,access" });
    expect(kinds.map((e) => e.action).sort()).toEqual(["auth.signed_in", "review.opened", "review.opened"]);
  });

  it("filters by status: entries recording a move to or from it, task or execution", async () => {
    const planning = await everything({ status: "PLANNING", task: one.taskId });
    // RECEIVED → PLANNING and PLANNING → READY.
    expect(planning.map((e) => [e.details.from_status, e.details.to_status])).toEqual([
      ["RECEIVED", "PLANNING"],
      ["PLANNING", "READY"],
    ]);
    const sent = await everything({ status: "SENT" });
    expect(sent.map((e) => e.action)).toEqual(["execution.sent", "execution.sent"]);
  });

  it("resolves an execution id, an idempotency key or a tool to the entries about those executions", async () => {
    const byId = await everything({ execution: one.executionId });
    expect(byId.map((e) => e.action)).toEqual(["execution.intent_recorded", "execution.sent", "review.opened"]);
    expect(byId.every((e) => e.taskId === one.taskId)).toBe(true);
    const byKey = await everything({ idempotency_key: two.key });
    expect(byKey.map((e) => e.stream)).toEqual([
      `execution:${two.executionId}`,
      `execution:${two.executionId}`,
      `review:rev-${two.executionId}`,
    ]);
    const byTool = await everything({ tool: "payments.refund" });
    expect(byTool).toHaveLength(6);
    expect(await everything({ tool: "crm.add_note" })).toEqual([]);
    // Both must hold: the key of one execution and the id of the other match nothing.
    const none = await searchAuditEntries(t.db, search({ execution: one.executionId, idempotency_key: two.key }));
    expect(none).toMatchObject({ items: [], matchedExecutions: 0 });
    const unknown = await searchAuditEntries(t.db, search({ idempotency_key: "vrt:nobody:nothing" }));
    expect(unknown).toMatchObject({ items: [], matchedExecutions: 0 });
    expect((await searchAuditEntries(t.db, search({ execution: one.executionId }))).matchedExecutions).toBe(1);
  });

  it("widens an execution filter to every entry of its task with scope=task", async () => {
    const wide = await everything({ execution: one.executionId, scope: "task" });
    const whole = await everything({ task: one.taskId });
    expect(wide.map((e) => e.id)).toEqual(whole.map((e) => e.id));
    expect(wide.some((e) => e.action === "task.created")).toBe(true);
  });

  it("filters by time window: from inclusive, to exclusive", async () => {
    const all = await everything({});
    const from = all[3]!.at;
    const to = all[all.length - 2]!.at;
    const window = await everything({ from: from.toISOString(), to: to.toISOString() });
    expect(window.map((e) => e.id)).toEqual(all.filter((e) => e.at >= from && e.at < to).map((e) => e.id));
  });

  it("keeps paging stable when entries are appended between pages", async () => {
    const first = await searchAuditEntries(t.db, search({ task: two.taskId }), { limit: 3, order: "desc" });
    await appendAuditEntry(t.db, {
      action: "review.decided",
      actor: { identity: alice.identity, kind: "user" },
      subject: { type: "review", id: `rev-${two.executionId}` },
      taskId: two.taskId,
      details: { execution_id: two.executionId, decision: "reject", reason: "not ours" },
    });
    const rest = await searchAuditEntries(t.db, search({ task: two.taskId }), {
      limit: 100,
      order: "desc",
      cursor: first.nextCursor,
    });
    const ids = [...first.items, ...rest.items].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.some((id) => rest.items.find((e) => e.id === id)?.action === "review.decided")).toBe(false);
  });

  it("refuses bad input: schema errors, a window that ends before it starts, a forged cursor", async () => {
    expect(
      AuditSearchSchema.safeParse({ status: "NOT A STATUS", kind: "transition,bogus", from: "today", extra: "1" })
        .success,
    ).toBe(false);
    await expect(
      searchAuditEntries(t.db, search({ from: "2026-11-30T12:00:00Z", to: "2026-11-30T11:00:00Z" })),
    ).rejects.toSatisfy(
      (e: unknown) => isAppError(e) && e.code === "validation_failed" && e.message === "to: must be later than from",
    );
    await expect(searchAuditEntries(t.db, search({}), { cursor: "not-a-cursor" })).rejects.toSatisfy(
      (e: unknown) => isAppError(e) && e.code === "validation_failed",
    );
    const words = parseAuditSearchParams({ status: "NOT A STATUS", kind: "bogus", from: "today", scope: "planet" });
    expect(words.ok).toBe(false);
    if (!words.ok) {
      expect(words.errors).toEqual(
        expect.arrayContaining([
          "From: must be a date and time, e.g. 2026-11-30T14:00 (UTC)",
          "Status: must be a status name",
          "Kind of event: unknown kind of event",
        ]),
      );
    }
  });

  it("exports a search as JSON Lines whose every line verifies", async () => {
    const stream = exportAuditSearch(t.db, search({ execution: one.executionId }), "jsonl", { pageSize: 2 });
    const text = await new Response(stream).text();
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(verifyAuditExport(text)).toMatchObject({ ok: true, records: 3, streams: 2 });
    const csv = await new Response(exportAuditSearch(t.db, search({ execution: one.executionId }), "csv")).text();
    expect(csv.trim().split("\n")).toHaveLength(4);
    expect(verifyAuditExport(csv, { format: "csv" }).ok).toBe(true);
  });
});
