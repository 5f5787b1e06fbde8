import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { escapeLikePattern } from "@/lib/core/like-pattern";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import type { Prisma } from "@/lib/generated/prisma/client";
import { parseOrThrow } from "@/lib/core/validation";
import { actorFilterOf } from "@/lib/model/audit/actor-filter";
import { openTaskView, type TaskView } from "@/lib/stores/tasks/task-views";
import { loadWorkflowDefinitions } from "@/lib/stores/workflow-registry";
import { readTaskCounts } from "@/lib/stores/task-counts";

export const ListTasksQuerySchema = z.strictObject({
  status: z.string().min(1).max(64).optional(),
  workflow: z.string().min(1).max(64).optional(),
  /** Task id or the start of one. */
  q: z.string().trim().min(1).max(128).optional(),
  /** Last changed by this actor: a full SPIFFE id exactly, or any part of one (`agent/refund-bot`, `refund-bot`). */
  actor: z.string().trim().min(1).max(256).optional(),
  /** What the list is ordered by: the last change (default) or the creation. */
  sort: z.enum(["updated", "created"]).default("updated"),
  /** Newest first (default) or oldest first. */
  order: z.enum(["desc", "asc"]).default("desc"),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type ListTasksQuery = z.input<typeof ListTasksQuerySchema>;

export interface TaskPage {
  items: TaskView[];
  /** Opaque; pass back as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/**
 * Newest activity first by default, or by creation; either way paged by
 * keyset on (sort column, id) so page 1,000 is as cheap as page 1: each page
 * is an index range scan, never an OFFSET.
 */
export async function listTasks(
  db: Db,
  rawQuery: ListTasksQuery,
  options: {
    /** Only these: an agent's own tasks and those delegated to it (lib/use-cases/authority/list-reachable-tasks.ts). */
    ownedOrDelegatedTo?: { identity: string; taskIds: string[] };
    /**
     * A task-id prefix or an actor looks only in this window of the tasks
     * changed most recently (`recentTasksWindow`: the console's list, whose
     * total says so). The API and exports leave it out: what they return is
     * complete (both filters read what they find first: idsStartingWith,
     * actorsContaining).
     */
    window?: RecentTasksWindow | null;
  } = {},
): Promise<TaskPage> {
  const query = parseOrThrow(ListTasksQuerySchema, rawQuery);
  const recent = options.window && (query.q || query.actor) ? options.window.where : null;
  const column = query.sort === "created" ? "createdAt" : "updatedAt";
  const after = query.cursor ? decodeCursor(query.sort, query.cursor) : undefined;
  const asc = query.order === "asc";
  const where: Prisma.TaskWhereInput = {
    ...(await filtersOf(db, query, options)),
    ...(after
      ? asc
        ? {
            [column]: { gte: after.at },
            OR: [{ [column]: { gt: after.at } }, { id: { gt: after.id } }],
          }
        : {
            // The redundant `lte` lets PostgreSQL start the index scan at the cursor.
            [column]: { lte: after.at },
            OR: [{ [column]: { lt: after.at } }, { id: { lt: after.id } }],
          }
      : {}),
  };
  const direction = asc ? "asc" : "desc";
  const rows = await db.task.findMany({
    where: recent ? { AND: [where, recent] } : where,
    orderBy: [{ [column]: direction }, { id: direction }],
    take: query.limit + 1,
  });
  // The console and the API draw each task by its definition: load those published elsewhere.
  await loadWorkflowDefinitions(
    db,
    rows.map((r) => r.workflowDigest),
  );
  // A listing is shown, never decided on: a value whose key is gone reads as such.
  const items = await Promise.all(rows.slice(0, query.limit).map((row) => openTaskView(db, row, "readable")));
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > query.limit && last ? encodeCursor(query.sort, last) : null };
}

type TaskFilters = Pick<z.output<typeof ListTasksQuerySchema>, "status" | "workflow" | "q" | "actor">;
type TaskReach = { ownedOrDelegatedTo?: { identity: string; taskIds: string[] } };

/** The list's filters as a condition: the page and its total count ask the same. */
async function filtersOf(db: Db, query: TaskFilters, options: TaskReach): Promise<Prisma.TaskWhereInput> {
  const reach = options.ownedOrDelegatedTo;
  const actor = query.actor ? actorFilterOf(query.actor) : null;
  return {
    ...(reach ? { AND: [{ OR: [{ createdBy: reach.identity }, { id: { in: reach.taskIds } }] }] } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.workflow ? { workflowName: query.workflow } : {}),
    ...(query.q ? await idsStartingWith(db, query.q) : {}),
    // A whole id is an equality, a part of one the actors it is part of: both read
    // tasks_tenant_id_updated_by_updated_at_id_idx (see actorsContaining).
    ...(actor
      ? actor.kind === "exact"
        ? { updatedBy: actor.actor }
        : { updatedBy: { in: await actorsContaining(db, actor.pattern) } }
      : {}),
  };
}

/** How many tasks a task-id prefix is looked up for by tasks_id_prefix_idx before the list walks its order instead. */
const ID_PREFIX_LOOKUP = 1_000;

/**
 * A task-id prefix as a condition the list's pages read by what they find.
 * `id LIKE 'q%'` (Prisma's startsWith) no index serves under row-level
 * security (LIKE is not leakproof), so the list walked its order filtering
 * every task, and a prefix few tasks match read them all, where the API and
 * the exports must stay complete. `starts_with(id, q)` is leakproof and
 * tasks_id_prefix_idx (SP-GiST) serves it, but Prisma's query builder does
 * not send it: the matching ids are read first, ID_PREFIX_LOOKUP + 1 at most.
 * - At most ID_PREFIX_LOOKUP match: the tasks are `id IN (those)`, an
 *   equality the primary key serves; none match, nothing more is read. A
 *   page costs its matches, up to ID_PREFIX_LOOKUP lookups.
 * - More match: the prefix is common, and the list walks its order with
 *   `LIKE` (escaped: "task_" must not match "taskX") until a page matches,
 *   O(page / share), the share of matching tasks being over
 *   ID_PREFIX_LOOKUP / the tenant's tasks. Ids are time-ordered, so the
 *   matches of a prefix naming an old period lie together near the old end
 *   of the update order, and the first page walks the tasks changed since
 *   (docs/cost-growth.md, "Still growing"); the console's window bounds that.
 * Each page looks the ids up again: a task made or removed meanwhile is
 * found or left out as the rest of the page's filters see it.
 */
async function idsStartingWith(db: Db, prefix: string): Promise<Prisma.TaskWhereInput> {
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM tasks WHERE starts_with(id, ${prefix}) LIMIT ${ID_PREFIX_LOOKUP + 1}`;
  if (rows.length <= ID_PREFIX_LOOKUP) return { id: { in: rows.map((r) => r.id) } };
  return { id: { startsWith: escapeLikePattern(prefix) } };
}

/**
 * The actors that last changed some task of the tenant and whose id
 * contains the pattern (`%part%`, ILIKE). The filter `updated_by ILIKE
 * '%part%'` itself no index can serve under row-level security (ILIKE is
 * not leakproof, so PostgreSQL checks the tenant's policy first, on every
 * row; pg_trgm's index included), and a part few tasks match read every
 * task, where the API and the exports must stay complete. So the tenant's
 * distinct actors are read first, one descent of
 * tasks_tenant_id_updated_by_updated_at_id_idx each (a loose index scan:
 * as many as the tenant has actors, agents and people, not tasks), the part
 * is matched among them, and the tasks are filtered by equality on those
 * (`updated_by IN (…)`), which the same index serves: one actor's tasks in
 * the list's order, several actors' matches, or the update order walked
 * when they are most tasks.
 */
async function actorsContaining(db: Db, pattern: string): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ actor: string }>>`
    WITH RECURSIVE actors(actor) AS (
      (SELECT updated_by FROM tasks ORDER BY updated_by LIMIT 1)
      UNION ALL
      SELECT (SELECT t.updated_by FROM tasks t WHERE t.updated_by > a.actor ORDER BY t.updated_by LIMIT 1)
        FROM actors a WHERE a.actor IS NOT NULL
    )
    SELECT actor FROM actors WHERE actor ILIKE ${pattern}`;
  return rows.map((r) => r.actor);
}

/** The tasks a filter by task-id prefix or actor looks among, when there are more: the ones changed most recently. */
const TASK_TEXT_FILTER_WINDOW = 10_000;

/** The `size` tasks changed most recently, as a condition on the update order. */
export interface RecentTasksWindow {
  size: number;
  where: Prisma.TaskWhereInput;
}

/**
 * The window a filter by task-id prefix or actor looks in: null while the
 * tenant has at most `size` tasks (from the counters), else the `size`
 * tasks changed most recently, as a range of the update-order index from the
 * last of them (walking `size` index entries to find it). The total counts
 * every match, and a prefix or a part of an actor most tasks match would
 * count them all without it; a common prefix's pages walk the update order
 * (idsStartingWith), which it bounds as well. Found once per page view and
 * given to both, the page and its total.
 */
export async function recentTasksWindow(db: Db, size = TASK_TEXT_FILTER_WINDOW): Promise<RecentTasksWindow | null> {
  const counts = await readTaskCounts(db);
  if (counts.reduce((n, c) => n + c.tasks, 0) <= size) return null;
  const edge = await db.task.findFirst({
    orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
    skip: size - 1,
    select: { updatedAt: true, id: true },
  });
  if (!edge) return null;
  // Exactly those: ties on updated_at are ordered by id, as the list's pages are.
  return {
    size,
    where: {
      updatedAt: { gte: edge.updatedAt },
      OR: [{ updatedAt: { gt: edge.updatedAt } }, { id: { gte: edge.id } }],
    },
  };
}

/**
 * How many tasks the filters select: the list's total. By status and
 * workflow alone it is exact, from the counters kept as tasks change
 * (lib/stores/task-counts.ts). A task-id prefix or an actor no counter
 * follows: those are counted in the recent tasks' window (`among` says so
 * when it applied; the one given, else found here), as the console's list
 * pages look in it. A count that read every task on each page view is what
 * docs/cost-growth.md rules out, and one capped by matches alone still read
 * them all when few match.
 */
export async function countTasks(
  db: Db,
  rawQuery: Omit<ListTasksQuery, "cursor" | "limit" | "order" | "sort">,
  options: { window?: RecentTasksWindow | null } = {},
): Promise<{ count: number; among: number | null }> {
  const query = parseOrThrow(ListTasksQuerySchema, rawQuery);
  if (!query.q && !query.actor) {
    const counts = await readTaskCounts(db);
    const selected = (c: { status: string; workflow: string }) =>
      (!query.status || c.status === query.status) && (!query.workflow || c.workflow === query.workflow);
    return { count: counts.filter(selected).reduce((n, c) => n + c.tasks, 0), among: null };
  }
  const window = options.window === undefined ? await recentTasksWindow(db) : options.window;
  const where = await filtersOf(db, query, {});
  return {
    count: await db.task.count({ where: window ? { AND: [where, window.where] } : where }),
    among: window?.size ?? null,
  };
}

/**
 * A task page's cursor: the last row's (updated_at, id), the same bytes as
 * before there was a second order; by creation it says so in its first part,
 * so a cursor of one order is refused by the other instead of paging wrongly.
 */
const cursorRefusal = { notOurs: "not a cursor returned by this API for this order" };
const updatedPageCursor = keysetCursor([keysetParts.instant, keysetParts.text], cursorRefusal);
const createdPageCursor = keysetCursor([z.literal("created"), keysetParts.instant, keysetParts.text], cursorRefusal);

type TaskSort = z.output<typeof ListTasksQuerySchema>["sort"];

function encodeCursor(sort: TaskSort, task: TaskView): string {
  return sort === "created"
    ? createdPageCursor.encode(["created", task.createdAt, task.id])
    : updatedPageCursor.encode([task.updatedAt, task.id]);
}

function decodeCursor(sort: TaskSort, cursor: string): { at: Date; id: string } {
  if (sort === "created") {
    const [, at, id] = createdPageCursor.decode(cursor);
    return { at, id };
  }
  const [at, id] = updatedPageCursor.decode(cursor);
  return { at, id };
}
