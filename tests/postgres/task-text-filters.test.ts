import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import type { Principal } from "@/lib/model/permissions";
import { globalSearch } from "@/lib/use-cases/search/global-search";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { countTasks, listTasks, recentTasksWindow, type ListTasksQuery } from "@/lib/use-cases/tasks/list-tasks";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { refundExecution } from "@/tests/helpers/effects";
import { analyzeDatabase, createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import {
  captureStatements,
  explainStatements,
  rowsReadFrom,
  type ExplainedStatement,
} from "@/tests/helpers/statement-plans";

/**
 * The API's and exports' task filter by actor is complete (no window), and
 * bounded by what it finds, not by the tasks: with thousands of tasks that do
 * not match, a filter few tasks match reads those few through
 * tasks_tenant_id_updated_by_updated_at_id_idx, where it read every task
 * (docs/cost-growth.md). The task-id prefix likewise, through
 * tasks_id_prefix_idx, and the global search's task and execution ids,
 * through tasks_id_prefix_idx and executions_id_prefix_idx. On the tenant's
 * connection, as the product runs them: row-level security decides which
 * conditions an index may serve.
 */

const needle: Actor = { identity: "spiffe://verity.test/agent/needle-bot", kind: "agent" };
const hay: Actor = { identity: "spiffe://verity.test/agent/hay-bot", kind: "agent" };
const copies = 6_000;

const admin = {
  kind: "user",
  id: "usr_admin",
  identity: "user:admin",
  role: "admin",
  displayName: "Admin",
  tenantId: "default",
  platformAdmin: false,
} as Principal;

let pgdb: PostgresTestDatabase;
/** The needle's tasks, newest change first. */
let found: string[];

beforeAll(async () => {
  pgdb = await createPostgresTestDatabase();
  const model = await createTask(pgdb.db, { workflow: "agent-task", intent_id: "hay" }, hay);
  // Thousands of tasks another actor changed: copies of one real row, as bench:cost's loader makes them.
  await pgdb.db.$executeRaw`
    INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                       created_at, created_by, updated_at, updated_by)
    SELECT tenant_id, 'hay_' || lpad(g::text, 5, '0'), workflow_name, workflow_version, workflow_digest, status, version,
           state, intent_id || g, created_at - make_interval(mins => g), created_by, updated_at - make_interval(mins => g),
           updated_by
      FROM tasks, generate_series(1, ${copies}) AS g WHERE id = ${model.task.id}`;
  // Five the needle touched, spread among them: three created by it, two it moved last.
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push((await createTask(pgdb.db, { workflow: "agent-task", intent_id: `needle-${i}` }, needle)).task.id);
  for (let i = 0; i < 2; i++) {
    const { task } = await createTask(pgdb.db, { workflow: "agent-task", intent_id: `moved-${i}` }, hay);
    await transitionTask(pgdb.db, task.id, { expected_version: task.version, to: "PLANNING" }, needle);
    ids.push(task.id);
  }
  found = ids.reverse();
  // Ids a prefix with "_" would match if "_" were LIKE's any-character: "hay_" must not find them.
  await pgdb.db.$executeRaw`
    INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                       created_at, created_by, updated_at, updated_by)
    SELECT tenant_id, 'hayx' || g, workflow_name, workflow_version, workflow_digest, status, version,
           state, 'hayx' || g, created_at, created_by, updated_at, updated_by
      FROM tasks, generate_series(1, 3) AS g WHERE id = ${model.task.id}`;
  // Thousands of calls, copies of one real one: 'exec_hay_00001' … newest first.
  const execution = await refundExecution(pgdb.db);
  await pgdb.db.$executeRaw`
    INSERT INTO executions
    SELECT (jsonb_populate_record(NULL::executions, to_jsonb(e) || jsonb_build_object(
              'id', 'exec_hay_' || lpad(g::text, 5, '0'),
              'tool_call_id', e.tool_call_id || '-' || g,
              'idempotency_key', e.idempotency_key || '-' || g,
              'created_at', e.created_at - make_interval(mins => g),
              'updated_at', e.updated_at - make_interval(mins => g)))).*
      FROM executions e, generate_series(1, ${copies}) AS g WHERE e.id = ${execution.id}`;
  // As the owner: the tenant's role may not ANALYZE (PostgreSQL skips the table with a warning).
  await analyzeDatabase(pgdb.url);
}, 120_000);
afterAll(async () => pgdb?.drop());

/**
 * Every task the query selects, page after page; the most task rows one
 * page's statements read; and the indexes the pages' plans name.
 */
async function allPages(
  query: ListTasksQuery,
  options: Parameters<typeof listTasks>[2] = {},
): Promise<{ ids: string[]; rowsRead: number; indexes: Set<string> }> {
  const ids: string[] = [];
  let rowsRead = 0;
  const indexes = new Set<string>();
  let cursor: string | undefined;
  do {
    const { result, sent } = await captureStatements(() => listTasks(pgdb.db, { ...query, cursor }, options));
    ids.push(...result.items.map((t) => t.id));
    const reads = await explainStatements(pgdb.url, sent);
    rowsRead = Math.max(
      rowsRead,
      reads.reduce((n, e) => n + rowsReadFrom(e.plan, "tasks"), 0),
    );
    for (const name of indexesOf(reads)) indexes.add(name);
    cursor = result.nextCursor ?? undefined;
  } while (cursor);
  return { ids, rowsRead, indexes };
}

/** The indexes the plans name. */
function indexesOf(reads: ExplainedStatement[]): string[] {
  return reads.flatMap((e) => [...JSON.stringify(e.plan).matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]!));
}

/** The hay tasks whose id starts with `prefix`, newest change first (task n changed n minutes before the model). */
async function hayStartingWith(prefix: string): Promise<string[]> {
  const rows = await pgdb.db.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM tasks WHERE starts_with(id, ${prefix}) ORDER BY updated_at DESC, id DESC`;
  return rows.map((r) => r.id);
}

describe("the task list's text filters on PostgreSQL, with thousands of tasks that do not match", () => {
  it("an actor's part finds every task it changed last, in pages, reading those tasks only", async () => {
    const { ids, rowsRead } = await allPages({ actor: "needle", limit: 2 });
    expect(ids).toEqual(found);
    // A page reads the needle's few tasks and the tenant's actors (one index descent each), not the 6,000 others.
    expect(rowsRead).toBeLessThan(100);
  });

  it("a whole SPIFFE id does the same, exactly", async () => {
    const { ids, rowsRead } = await allPages({ actor: needle.identity, limit: 2 });
    expect(ids).toEqual(found);
    expect(rowsRead).toBeLessThan(100);
  });

  it("an actor matching nothing reads no more than one matching a few", async () => {
    const { ids, rowsRead } = await allPages({ actor: "nobody-here", limit: 50 });
    expect(ids).toEqual([]);
    expect(rowsRead).toBeLessThan(100);
  });

  it("a task-id prefix few tasks match finds every one, in pages and in order, reading those only", async () => {
    const expected = await hayStartingWith("hay_0012");
    expect(expected).toHaveLength(10);
    const { ids, rowsRead, indexes } = await allPages({ q: "hay_0012", limit: 3 });
    expect(ids).toEqual(expected);
    // The ten through tasks_id_prefix_idx, not the 6,000 others (LIKE 'hay\_0012%' read all 6,010).
    expect(rowsRead).toBeLessThan(100);
    expect(indexes).toContain("tasks_id_prefix_idx");
    expect(await countTasks(pgdb.db, { q: "hay_0012" })).toEqual({ count: 10, among: null });
  });

  it("a task-id prefix no task matches reads no task, nor does its total", async () => {
    const { ids, rowsRead, indexes } = await allPages({ q: "no-such-task", limit: 50 });
    expect(ids).toEqual([]);
    expect(rowsRead).toBeLessThan(100);
    expect(indexes).toContain("tasks_id_prefix_idx");
    const { result, sent } = await captureStatements(() => countTasks(pgdb.db, { q: "no-such-task" }));
    expect(result).toEqual({ count: 0, among: null });
    const reads = await explainStatements(pgdb.url, sent);
    expect(reads.reduce((n, e) => n + rowsReadFrom(e.plan, "tasks"), 0)).toBeLessThan(100);
  });

  it("a prefix more tasks match than are looked up is complete, in order, '_' literal, a page reading about its page", async () => {
    const expected = await hayStartingWith("hay_");
    expect(expected).toHaveLength(copies);
    const { ids, rowsRead } = await allPages({ q: "hay_", limit: 200 });
    // Not the hayx tasks: "_" is no wildcard.
    expect(ids).toEqual(expected);
    // The lookup stops at 1,001 ids; the page walks the update order to its 200 matches.
    expect(rowsRead).toBeLessThan(1_500);
    expect(await countTasks(pgdb.db, { q: "hay_" })).toEqual({ count: copies, among: null });
  }, 60_000);

  it("the console's window still bounds what a prefix finds", async () => {
    const window = await recentTasksWindow(pgdb.db, 1_000);
    expect(window).not.toBeNull();
    const inWindow = async (prefix: string) => {
      const rows = await pgdb.db.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM (SELECT id, updated_at FROM tasks ORDER BY updated_at DESC, id DESC LIMIT 1000) recent
         WHERE starts_with(id, ${prefix}) ORDER BY updated_at DESC, id DESC`;
      return rows.map((r) => r.id);
    };
    for (const q of ["hay_0012", "hay_05", "hay_"]) {
      const expected = await inWindow(q);
      expect((await allPages({ q, limit: 100 }, { window })).ids).toEqual(expected);
      expect(await countTasks(pgdb.db, { q }, { window })).toEqual({ count: expected.length, among: 1_000 });
    }
    expect(await inWindow("hay_05")).toEqual([]);
  }, 60_000);

  it("the global search's task ids read the matches, not every task", async () => {
    const { result, sent } = await captureStatements(() => globalSearch(pgdb.db, admin, { q: "hay_0012", limit: 5 }));
    expect(result.groups.find((g) => g.kind === "task")?.hits.map((h) => h.value)).toEqual([
      "hay_00120",
      "hay_00121",
      "hay_00122",
      "hay_00123",
      "hay_00124",
    ]);
    const byId = (await explainStatements(pgdb.url, sent)).filter((e) => /FROM tasks\s+WHERE id = \$1/.test(e.text));
    expect(byId).toHaveLength(1);
    expect(rowsReadFrom(byId[0]!.plan, "tasks")).toBeLessThan(100);
    const none = await captureStatements(() => globalSearch(pgdb.db, admin, { q: "no-such-task" }));
    const noneById = (await explainStatements(pgdb.url, none.sent)).filter((e) =>
      /FROM tasks\s+WHERE id = \$1/.test(e.text),
    );
    expect(rowsReadFrom(noneById[0]!.plan, "tasks")).toBeLessThan(100);
  });

  it("the global search's execution ids read the matches through executions_id_prefix_idx, not every execution", async () => {
    /** The five seeded execution ids from number `n` on. */
    const fiveFrom = (n: number) => Array.from({ length: 5 }, (_, i) => `exec_hay_${String(n + i).padStart(5, "0")}`);
    const byId = async (q: string) => {
      const { result, sent } = await captureStatements(() => globalSearch(pgdb.db, admin, { q, limit: 5 }));
      const reads = (await explainStatements(pgdb.url, sent)).filter((e) =>
        /FROM executions\s+WHERE (?:starts_with\(id|id = \$1 OR id LIKE)/.test(e.text),
      );
      expect(reads).toHaveLength(1);
      const hits = result.groups.find((g) => g.kind === "execution")?.hits.map((h) => h.value) ?? [];
      return { hits, rowsRead: rowsReadFrom(reads[0]!.plan, "executions"), indexes: indexesOf(reads) };
    };
    // Ten match: the newest changed, through the index (`LIKE` read all 6,001).
    const few = await byId("exec_hay_0012");
    expect(few.hits).toEqual(fiveFrom(120));
    expect(few.rowsRead).toBeLessThan(100);
    expect(few.indexes).toContain("executions_id_prefix_idx");
    // None match: nothing read but the index.
    const none = await byId("exec_nothing");
    expect(none.hits).toEqual([]);
    expect(none.rowsRead).toBeLessThan(100);
    expect(none.indexes).toContain("executions_id_prefix_idx");
    // A thousand match: still the newest changed of them.
    expect((await byId("exec_hay_05")).hits).toEqual(fiveFrom(5000));
    // Every one matches, as while an id is typed: the newest created, shown newest change first, from the
    // 1,001 matches looked up and a page of the primary key, not all 6,000 sorted.
    const all = await byId("exec_hay");
    expect(all.hits).toEqual(fiveFrom(5995));
    expect(all.rowsRead).toBeLessThan(1_100);
  });
});
