import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import { Prisma } from "@/lib/generated/prisma/client";
import { actorFilterOf } from "@/lib/model/audit/actor-filter";
import { AuditActionSchema, AUTH_STREAM, SYSTEM_STREAM } from "@/lib/model/audit/audit-chain";
import { csvHeader, toCsvRow, toJsonLine, type AuditExportFormat } from "@/lib/use-cases/audit/audit-export";
import { selectAuditEntries, type AuditEntry } from "@/lib/stores/audit-log";

/**
 * Searching the audit log: one task's merged history (its timeline) and the
 * auditors' search across tasks. Read-only over audit_entries (and
 * executions, to resolve a tool, an idempotency key or an execution id to
 * the entries about it). Keyset pages on (at, stream, seq), either way, so
 * a task with 20,000 entries costs the same per page as one with twenty,
 * and a page boundary never moves when entries are appended meanwhile.
 */

// ---------------------------------------------------------------------------
// Kinds of event: the timeline's filter, a grouping of actions by prefix.
// ---------------------------------------------------------------------------

export const auditEventKinds = [
  "transition",
  "restore",
  "execution",
  "reconciliation",
  "review",
  "checkpoint",
  "alert",
  "instruction",
  "access",
  "audit",
] as const;
export type AuditEventKind = (typeof auditEventKinds)[number] | "other";
export const AuditEventKindSchema = z.enum(auditEventKinds);

export const auditEventKindLabels: Record<AuditEventKind, string> = {
  transition: "Transitions",
  restore: "Restores",
  execution: "Executions",
  reconciliation: "Reconciliations",
  review: "Reviews and decisions",
  checkpoint: "Checkpoints",
  alert: "Alerts",
  instruction: "Instructions",
  access: "Sign-ins and denials",
  audit: "Audit log (exports, holds, annotations)",
  other: "Other",
};

/**
 * Each kind as exact actions and action prefixes. Prefixes, not a closed
 * list, so actions added later (an alert's acknowledgement, an instruction
 * recorded) fall into their kind without touching this table.
 */
const kindMatchers: Record<(typeof auditEventKinds)[number], { exact?: string[]; prefixes?: string[] }> = {
  transition: { exact: ["task.created", "task.transitioned"] },
  restore: { exact: ["task.restored", "checkpoint.restore_refused"] },
  execution: { prefixes: ["execution."] },
  reconciliation: { prefixes: ["reconciliation."] },
  review: { prefixes: ["review."] },
  checkpoint: { exact: ["checkpoint.created"] },
  alert: { prefixes: ["divergence.", "alert."] },
  instruction: { prefixes: ["instruction."] },
  access: { prefixes: ["auth."] },
  audit: { prefixes: ["audit.", "annotation."] },
};

export function kindOfAction(action: string): AuditEventKind {
  for (const kind of auditEventKinds) {
    const m = kindMatchers[kind];
    if (m.exact?.includes(action) || m.prefixes?.some((p) => action.startsWith(p))) return kind;
  }
  return "other";
}

function kindCondition(kinds: readonly (typeof auditEventKinds)[number][]): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  for (const kind of kinds) {
    const m = kindMatchers[kind];
    if (m.exact?.length) parts.push(Prisma.sql`action IN (${Prisma.join(m.exact)})`);
    // The prefixes are constants above: no LIKE metacharacters to escape but `_`, which they do not contain.
    for (const p of m.prefixes ?? []) parts.push(Prisma.sql`action LIKE ${`${p}%`}`);
  }
  return Prisma.sql`(${Prisma.join(parts, " OR ")})`;
}

// ---------------------------------------------------------------------------
// The query
// ---------------------------------------------------------------------------

const isoInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const kindList = z
  .string()
  .max(200)
  .transform((s) =>
    s
      .split(",")
      .map((k) => k.trim())
      .filter(Boolean),
  )
  .pipe(z.array(AuditEventKindSchema).max(auditEventKinds.length));

/**
 * Every filter of the search, as the API and the console send it (query
 * strings). All filters combine with AND. `status`, `tool`,
 * `idempotency_key` and `execution` are resolved as documented in
 * docs/audit.md ("Search"); `scope` widens the execution filters from the
 * entries about those executions to every entry of their tasks.
 */
export const AuditSearchSchema = z.strictObject({
  /** Inclusive. */
  from: isoInstant.optional(),
  /** Exclusive. */
  to: isoInstant.optional(),
  task: z.string().min(1).max(128).optional(),
  actor: z.string().min(1).max(256).optional(),
  action: AuditActionSchema.optional(),
  kind: kindList.optional().meta({ description: `Kinds of event, comma-separated: ${auditEventKinds.join(", ")}.` }),
  status: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, "must be a status name")
    .optional()
    .meta({ description: "Entries recording a move to or from this status (task transitions and execution events)." }),
  tool: z.string().min(1).max(128).optional(),
  idempotency_key: z.string().min(1).max(256).optional(),
  execution: z.string().min(1).max(128).optional().meta({ description: "An execution id." }),
  scope: z.enum(["execution", "task"]).default("execution").meta({
    description:
      "With tool, idempotency_key or execution: the entries about the matching executions (default), or every entry of their tasks.",
  }),
});
export type AuditSearch = z.output<typeof AuditSearchSchema>;
export type AuditSearchInput = z.input<typeof AuditSearchSchema>;

export const auditOrders = ["asc", "desc"] as const;
export type AuditOrder = (typeof auditOrders)[number];

export interface AuditSearchPage {
  items: AuditEntry[];
  /** Opaque; pass back (with the same order) for the next page. Null on the last page. */
  nextCursor: string | null;
  /**
   * With an execution filter: how many executions it matched. Zero explains
   * an empty result ("no execution has that idempotency key").
   */
  matchedExecutions: number | null;
}

export function hasExecutionFilter(q: Pick<AuditSearch, "tool" | "idempotency_key" | "execution">): boolean {
  return q.tool !== undefined || q.idempotency_key !== undefined || q.execution !== undefined;
}

/** The checks zod's shape cannot make: a time window that ends before it starts. */
export function assertSearchWindow(q: Pick<AuditSearch, "from" | "to">): void {
  if (q.from && q.to && q.to.getTime() <= q.from.getTime()) {
    throw new AppError("validation_failed", "to: must be later than from", {
      errors: [{ field: "to", message: "must be later than from" }],
    });
  }
}

function executionsSql(q: AuditSearch): Prisma.Sql {
  const conditions: Prisma.Sql[] = [];
  if (q.execution !== undefined) conditions.push(Prisma.sql`id = ${q.execution}`);
  if (q.idempotency_key !== undefined) conditions.push(Prisma.sql`idempotency_key = ${q.idempotency_key}`);
  if (q.tool !== undefined) conditions.push(Prisma.sql`tool = ${q.tool}`);
  return Prisma.sql`FROM executions WHERE ${Prisma.join(conditions, " AND ")}`;
}

function conditionsOf(q: AuditSearch): Prisma.Sql[] {
  const c: Prisma.Sql[] = [];
  if (q.from) c.push(Prisma.sql`at >= ${q.from.toISOString()}::timestamptz`);
  if (q.to) c.push(Prisma.sql`at < ${q.to.toISOString()}::timestamptz`);
  if (q.task) c.push(Prisma.sql`task_id = ${q.task}`);
  if (q.actor) c.push(actorCondition(q.actor));
  if (q.action) c.push(Prisma.sql`action = ${q.action}`);
  if (q.kind?.length) c.push(kindCondition(q.kind));
  if (q.status) c.push(Prisma.sql`(details->>'to_status' = ${q.status} OR details->>'from_status' = ${q.status})`);
  if (hasExecutionFilter(q)) {
    const executions = executionsSql(q);
    if (q.scope === "task") {
      c.push(Prisma.sql`task_id IN (SELECT task_id ${executions})`);
    } else {
      // The execution's own chain (intent, sent, outcome, reconciliation),
      // and whatever else names it: its reviews' openings, decisions and
      // closes, the alerts raised about it.
      c.push(
        Prisma.sql`(stream IN (SELECT 'execution:' || id ${executions}) OR details->>'execution_id' IN (SELECT id ${executions}))`,
      );
    }
  }
  return c;
}

/** The full SPIFFE id exactly, or any actor containing what was typed (lib/model/audit/actor-filter.ts). */
export function actorCondition(input: string): Prisma.Sql {
  const filter = actorFilterOf(input);
  return filter.kind === "exact" ? Prisma.sql`actor = ${filter.actor}` : Prisma.sql`actor ILIKE ${filter.pattern}`;
}

/**
 * One page of the entries matching `query`, oldest first (`asc`) or newest
 * first (`desc`), keyset-paged on (at, stream, seq): never OFFSET. A
 * cursor continues strictly after its entry in the page's order, so
 * entries appended between two pages neither repeat nor shift the next
 * page (oldest first, they appear at the end).
 */
export async function searchAuditEntries(
  db: Db,
  query: AuditSearch,
  page: { cursor?: string | null; limit?: number; order?: AuditOrder } = {},
): Promise<AuditSearchPage> {
  assertSearchWindow(query);
  const limit = Math.min(Math.max(page.limit ?? 100, 1), 1000);
  const order = page.order ?? "asc";
  const conditions = conditionsOf(query);
  if (page.cursor) {
    const after = decodeSearchCursor(page.cursor);
    conditions.push(
      order === "asc"
        ? Prisma.sql`(at, stream, seq) > (${after.at}::timestamptz, ${after.stream}, ${after.seq}::int)`
        : Prisma.sql`(at, stream, seq) < (${after.at}::timestamptz, ${after.stream}, ${after.seq}::int)`,
    );
  }
  const where = conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}` : Prisma.empty;
  const orderBy =
    order === "asc" ? Prisma.sql`ORDER BY at, stream, seq` : Prisma.sql`ORDER BY at DESC, stream DESC, seq DESC`;
  const [rows, matched] = await Promise.all([
    selectAuditEntries(db, Prisma.sql`${where} ${orderBy} LIMIT ${limit + 1}`),
    hasExecutionFilter(query) ? countExecutions(db, query) : Promise.resolve(null),
  ]);
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    nextCursor: rows.length > limit && last ? encodeSearchCursor(last) : null,
    matchedExecutions: matched,
  };
}

async function countExecutions(db: Db, q: AuditSearch): Promise<number> {
  const rows = await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n ${executionsSql(q)}`;
  return rows[0]?.n ?? 0;
}

/** A search page's cursor: the last entry's (at, stream, seq). */
const searchPageCursor = keysetCursor([keysetParts.instant, keysetParts.text, keysetParts.integer], {
  notOurs: "not a cursor returned by this search",
});

export function encodeSearchCursor(e: Pick<AuditEntry, "at" | "stream" | "seq">): string {
  return searchPageCursor.encode([e.at, e.stream, e.seq]);
}

export function decodeSearchCursor(cursor: string): { at: string; stream: string; seq: number } {
  const [at, stream, seq] = searchPageCursor.decode(cursor);
  return { at: at.toISOString(), stream, seq };
}

// ---------------------------------------------------------------------------
// One task's history
// ---------------------------------------------------------------------------

/** The timeline's filters: the search's, less the task (the page's) and the execution filters. */
export const TaskHistoryQuerySchema = z.strictObject({
  order: z.enum(auditOrders).default("desc"),
  kind: kindList.optional(),
  actor: z.string().min(1).max(256).optional(),
  from: isoInstant.optional(),
  to: isoInstant.optional(),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type TaskHistoryQuery = z.output<typeof TaskHistoryQuerySchema>;

/**
 * A task's whole history, merged: every entry with its task_id, whatever
 * chain it is in (the task's transitions and restores, its executions'
 * events and reconciliations, its reviews and decisions, checkpoints,
 * alerts), in commit order. Served by the (task_id, at, stream, seq) index
 * in either direction.
 */
export async function listTaskHistory(db: Db, taskId: string, q: TaskHistoryQuery): Promise<AuditSearchPage> {
  return searchAuditEntries(db, taskHistorySearch(taskId, q), { cursor: q.cursor, limit: q.limit, order: q.order });
}

/**
 * The chains that make up a task's record: every stream its entries are in,
 * and the streams of the aggregates it owns (executions, reviews,
 * checkpoints, alerts) even when no entry of theirs is left, so a stream
 * whose entries were all deleted still shows up against its head. The
 * shared `auth` and `system` streams are not the task's: they are verified
 * whole, by verifyAuditChains.
 */
export async function taskAuditStreams(db: Db, taskId: string): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ stream: string }>>`
    SELECT DISTINCT stream FROM audit_entries WHERE task_id = ${taskId}
    UNION SELECT 'task:' || ${taskId}
    UNION SELECT 'execution:' || id FROM executions WHERE task_id = ${taskId}
    UNION SELECT 'review:' || id FROM reviews WHERE task_id = ${taskId}
    UNION SELECT 'checkpoint:' || id FROM checkpoints WHERE task_id = ${taskId}
    UNION SELECT 'divergence_alert:' || id FROM divergence_alerts WHERE task_id = ${taskId}`;
  return rows
    .map((r) => r.stream)
    .filter((s) => s !== AUTH_STREAM && s !== SYSTEM_STREAM)
    .sort();
}

// ---------------------------------------------------------------------------
// Export of a search
// ---------------------------------------------------------------------------

/**
 * The search's matches as an export (audit-export.ts's formats, every line
 * verifiable), oldest first, read one page per pull: the console's export
 * form sends its current filters, whichever they are.
 */
export function exportAuditSearch(
  db: Db,
  query: AuditSearch,
  format: AuditExportFormat,
  options: { pageSize?: number } = {},
): ReadableStream<Uint8Array> {
  assertSearchWindow(query);
  const encoder = new TextEncoder();
  let cursor: string | null = null;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started && format === "csv") controller.enqueue(encoder.encode(csvHeader));
      if (started && cursor === null) return controller.close();
      started = true;
      const page = await searchAuditEntries(db, query, { cursor, limit: options.pageSize ?? 500, order: "asc" });
      const text = page.items.map(format === "csv" ? toCsvRow : toJsonLine).join("");
      if (text) controller.enqueue(encoder.encode(text));
      cursor = page.nextCursor;
      if (cursor === null) controller.close();
    },
  });
}

/** How many entries match: the history's "N events" (an index-only count on task_id for one task). */
export async function countAuditEntries(db: Db, query: AuditSearch): Promise<number> {
  assertSearchWindow(query);
  const conditions = conditionsOf(query);
  const where = conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}` : Prisma.empty;
  const rows = await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM audit_entries ${where}`;
  return rows[0]?.n ?? 0;
}

/** The search a task history runs: its filters, on the task. */
export function taskHistorySearch(
  taskId: string,
  q: Pick<TaskHistoryQuery, "kind" | "actor" | "from" | "to">,
): AuditSearch {
  return { task: taskId, actor: q.actor, kind: q.kind, from: q.from, to: q.to, scope: "execution" };
}
