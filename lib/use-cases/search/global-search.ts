import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { escapeLikePattern } from "@/lib/core/like-pattern";
import { Prisma } from "@/lib/generated/prisma/client";
import { can, mayReadRestricted, requirePermission, type Principal } from "@/lib/model/permissions";
import { actorCondition } from "@/lib/use-cases/audit/audit-search";
import { blindIndexCandidates } from "@/lib/stores/blind-index";

/**
 * The console's global search (docs/search.md): one box over what people
 * see and paste — task ids, intents, customers, execution ids, idempotency
 * keys and actors. Every query runs on the caller's tenant connection
 * (row-level security keeps it to that tenant), is bounded by LIMIT, and is
 * filtered by permission before it runs: customers are searched only for a
 * reader cleared for restricted data (data:restricted), and for anyone else
 * the customer query is not made at all, so neither a customer id nor the
 * fact that one matched can reach them. Actors need audit:read.
 *
 * Customer ids live in sealed requests (docs/encryption.md): SQL cannot read
 * them, and nothing here opens rows to compare. A call is found by its
 * keyed blind index (lib/stores/blind-index.ts), an exact match of the
 * whole id; a request stored in the clear (encryption off) is compared as
 * it is.
 */

/** How many of the newest audit entries an actor is looked for in. */
const actorWindow = 20_000;

/** How many of an execution-id prefix's matches are ordered by their last change; more are taken newest created first. */
const executionPrefixLookup = 1_000;

/** How many of the most recently changed tasks a partial intent is looked for in. */
export const intentWindow = 5_000;

export const searchKinds = ["task", "intent", "customer", "execution", "idempotency_key", "actor"] as const;
export type SearchKind = (typeof searchKinds)[number];

export const searchKindLabels: Record<SearchKind, string> = {
  task: "Tasks",
  intent: "Intents",
  customer: "Customers",
  execution: "Executions",
  idempotency_key: "Idempotency keys",
  actor: "Actors",
};

export const GlobalSearchQuerySchema = z.strictObject({
  q: z.string().trim().min(2, "type at least 2 characters").max(200),
  /** Hits per kind; the box asks for a few, the /search page for more. */
  limit: z.coerce.number().int().min(1).max(50).default(5),
});
export type GlobalSearchQuery = z.input<typeof GlobalSearchQuerySchema>;

export interface SearchHit {
  kind: SearchKind;
  /** What matched: a task id, an intent, an execution id, a key, an actor, a customer id (only for the cleared). */
  value: string;
  taskId: string | null;
  executionId: string | null;
  /** The row's status (a task's, a call's), for the line under the value. */
  status: string | null;
  /** The workflow (a task) or the tool (a call). */
  context: string | null;
  at: Date | null;
}

export interface SearchGroup {
  kind: SearchKind;
  hits: SearchHit[];
  /** More matched than the limit: the /search page shows more, the lists filter further. */
  more: boolean;
}

export interface GlobalSearchResult {
  query: string;
  groups: SearchGroup[];
  /** Kinds not searched for this reader, with why (the reader's clearance, never what would have matched). */
  notSearched: Array<{ kind: SearchKind; why: string }>;
  total: number;
}

interface TaskRow {
  id: string;
  workflow_name: string;
  status: string;
  intent_id: string;
  updated_at: Date;
}
interface ExecutionRow {
  id: string;
  task_id: string;
  tool: string;
  status: string;
  idempotency_key: string;
  updated_at: Date;
}

function taskHit(kind: SearchKind, value: string, r: TaskRow): SearchHit {
  return { kind, value, taskId: r.id, executionId: null, status: r.status, context: r.workflow_name, at: r.updated_at };
}
function executionHit(kind: SearchKind, value: string, r: ExecutionRow): SearchHit {
  return { kind, value, taskId: r.task_id, executionId: r.id, status: r.status, context: r.tool, at: r.updated_at };
}

function groupOf(kind: SearchKind, hits: SearchHit[], limit: number): SearchGroup {
  return { kind, hits: hits.slice(0, limit), more: hits.length > limit };
}

/** The search of `raw.q` across every kind this principal may search, in their tenant (`db` is dbFor(principal)). */
export async function globalSearch(db: Db, principal: Principal, raw: GlobalSearchQuery): Promise<GlobalSearchResult> {
  requirePermission(principal, "tasks:read");
  const parsed = GlobalSearchQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? "q");
    throw new AppError("validation_failed", `${field}: ${issue?.message ?? "invalid"}`, {
      errors: [{ field, message: issue?.message ?? "invalid" }],
    });
  }
  const { q, limit } = parsed.data;
  const take = limit + 1;
  const contains = `%${escapeLikePattern(q)}%`;
  const cleared = mayReadRestricted(principal);
  const mayReadActors = can(principal, "audit:read");

  const [tasks, intents, customers, executions, keys, actors] = await Promise.all([
    // An id pasted whole is a primary-key lookup; a prefix reads tasks_id_prefix_idx (SP-GiST, starts_with:
    // the primary key serves no prefix under a collation other than C, and row-level security lets no index
    // serve LIKE, which is not leakproof) or, when most tasks match, the update order until `take` match.
    // `id = q OR id LIKE 'q%'` sorted by (id = q) read every task on each keystroke (docs/cost-growth.md).
    db.$queryRaw<TaskRow[]>`
      SELECT id, workflow_name, status, intent_id, updated_at FROM (
        (SELECT id, workflow_name, status, intent_id, updated_at FROM tasks WHERE id = ${q})
        UNION ALL
        (SELECT id, workflow_name, status, intent_id, updated_at FROM tasks
          WHERE starts_with(id, ${q}) AND id <> ${q} ORDER BY updated_at DESC, id DESC LIMIT ${take})
      ) hits
       ORDER BY (id = ${q}) DESC, updated_at DESC LIMIT ${take}`,
    // An intent typed whole is found among every task (tasks_intent_id_idx); any part of one among the
    // newest intentWindow tasks: ILIKE '%q%' has no index to use, and over the whole table it read every
    // task on each keystroke (docs/cost-growth.md).
    db.$queryRaw<TaskRow[]>`
      SELECT id, workflow_name, status, intent_id, updated_at FROM (
        (SELECT id, workflow_name, status, intent_id, updated_at FROM tasks
          WHERE intent_id = ${q} ORDER BY updated_at DESC LIMIT ${take})
        UNION
        (SELECT id, workflow_name, status, intent_id, updated_at FROM (
           SELECT id, workflow_name, status, intent_id, updated_at FROM tasks
            ORDER BY updated_at DESC, id DESC LIMIT ${intentWindow}) recent
          WHERE intent_id ILIKE ${contains})
      ) hits
       ORDER BY (intent_id = ${q}) DESC, updated_at DESC LIMIT ${take}`,
    cleared ? customerExecutions(db, principal.tenantId, q, take) : Promise.resolve([]),
    // Execution ids by the primary key and executions_id_prefix_idx likewise; `id LIKE 'q%'` read every
    // execution on each keystroke. No index has the executions in their update order, so the prefix's first
    // executionPrefixLookup + 1 matches are read through the index: up to executionPrefixLookup match, the
    // newest changed of them; more (the first characters of an id being typed, "exec_01k"), the newest
    // created instead (ids are time-ordered), by the primary key walked backwards: a page, not every match.
    db.$queryRaw<ExecutionRow[]>`
      WITH matches AS (
        SELECT id, task_id, tool, status::text AS status, idempotency_key, updated_at FROM executions
         WHERE starts_with(id, ${q}) AND id <> ${q} LIMIT ${executionPrefixLookup + 1}
      )
      SELECT id, task_id, tool, status, idempotency_key, updated_at FROM (
        (SELECT id, task_id, tool, status::text AS status, idempotency_key, updated_at FROM executions
          WHERE id = ${q})
        UNION ALL
        (SELECT * FROM matches WHERE (SELECT count(*) FROM matches) <= ${executionPrefixLookup})
        UNION ALL
        (SELECT id, task_id, tool, status::text AS status, idempotency_key, updated_at FROM executions
          WHERE starts_with(id, ${q}) AND id <> ${q} AND (SELECT count(*) FROM matches) > ${executionPrefixLookup}
          ORDER BY id DESC LIMIT ${take})
      ) hits
       ORDER BY (id = ${q}) DESC, updated_at DESC LIMIT ${take}`,
    db.$queryRaw<ExecutionRow[]>`
      SELECT id, task_id, tool, status::text AS status, idempotency_key, updated_at FROM executions
       WHERE idempotency_key = ${q} OR idempotency_key LIKE ${contains}
       ORDER BY (idempotency_key = ${q}) DESC, updated_at DESC LIMIT ${take}`,
    mayReadActors ? matchingActors(db, q, take) : Promise.resolve([]),
  ]);

  const groups: SearchGroup[] = [
    groupOf(
      "task",
      tasks.map((r) => taskHit("task", r.id, r)),
      limit,
    ),
    groupOf(
      "intent",
      intents.map((r) => taskHit("intent", r.intent_id, r)),
      limit,
    ),
    // The customer id shown is the one typed, to a reader who may see it; the request is never opened here.
    groupOf(
      "customer",
      customers.map((r) => executionHit("customer", q, r)),
      limit,
    ),
    groupOf(
      "execution",
      executions.map((r) => executionHit("execution", r.id, r)),
      limit,
    ),
    groupOf(
      "idempotency_key",
      keys.map((r) => executionHit("idempotency_key", r.idempotency_key, r)),
      limit,
    ),
    groupOf(
      "actor",
      actors.map((a) => ({
        kind: "actor" as const,
        value: a.actor,
        taskId: null,
        executionId: null,
        status: null,
        context: `${a.entries}${a.entries >= actorSampleSize ? "+" : ""} audit entries`,
        at: a.last_at,
      })),
      limit,
    ),
  ].filter((g) => g.hits.length > 0);

  const notSearched: GlobalSearchResult["notSearched"] = [];
  if (!cleared)
    notSearched.push({
      kind: "customer",
      why: "Customer ids are restricted data: your role does not include data:restricted, so they are not searched.",
    });
  if (!mayReadActors)
    notSearched.push({ kind: "actor", why: "Actors come from the audit log, which your role does not read." });

  return { query: q, groups, notSearched, total: groups.reduce((n, g) => n + g.hits.length, 0) };
}

/**
 * Calls whose request names this customer: by blind index (sealed requests,
 * one candidate per live data key of the tenant) or, for a request stored
 * in the clear, by its field. An exact match of the whole id only: an HMAC
 * has no prefixes.
 */
async function customerExecutions(db: Db, tenantId: string, customerId: string, take: number): Promise<ExecutionRow[]> {
  const candidates = await blindIndexCandidates(db, tenantId, "customer_id", customerId);
  const byIndex = candidates.length ? Prisma.sql`customer_index IN (${Prisma.join(candidates)})` : Prisma.sql`false`;
  return db.$queryRaw<ExecutionRow[]>`
    SELECT id, task_id, tool, status::text AS status, idempotency_key, updated_at FROM executions
     WHERE ${byIndex} OR (jsonb_typeof(request) = 'object' AND request->>'customer_id' = ${customerId})
     ORDER BY updated_at DESC LIMIT ${take}`;
}

/** How many of an actor's newest entries are counted: enough to tell a busy actor, bounded whatever the log's size. */
const actorSampleSize = 1000;

/**
 * Actors whose id contains what was typed (or is it, for a full SPIFFE id),
 * with their entry counts over a bounded sample of the newest matching
 * entries: the log can be long, the answer must stay fast.
 */
async function matchingActors(
  db: Db,
  q: string,
  take: number,
): Promise<Array<{ actor: string; entries: number; last_at: Date }>> {
  // Among the newest actorWindow entries: a part of an actor matching none read the whole audit log (docs/cost-growth.md).
  return db.$queryRaw`
    SELECT actor, count(*)::int AS entries, max(at) AS last_at FROM (
      SELECT actor, at FROM (SELECT actor, at FROM audit_entries ORDER BY at DESC LIMIT ${actorWindow}) recent
       WHERE ${actorCondition(q)} ORDER BY at DESC LIMIT ${actorSampleSize}
    ) sample
    GROUP BY actor ORDER BY max(at) DESC LIMIT ${take}`;
}
