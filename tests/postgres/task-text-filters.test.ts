import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import type { Principal } from "@/lib/model/permissions";
import { globalSearch } from "@/lib/use-cases/search/global-search";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { listTasks, type ListTasksQuery } from "@/lib/use-cases/tasks/list-tasks";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { captureStatements, explainStatements, rowsReadFrom } from "@/tests/helpers/statement-plans";

/**
 * The API's and exports' task filter by actor is complete (no window), and
 * bounded by what it finds, not by the tasks: with thousands of tasks that do
 * not match, a filter few tasks match reads those few through
 * tasks_tenant_id_updated_by_updated_at_id_idx, where it read every task
 * (docs/cost-growth.md). The global search's task ids likewise, through
 * tasks_id_prefix_idx. On the tenant's connection, as the product runs
 * them: row-level security decides which conditions an index may serve.
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
  await pgdb.db.$executeRawUnsafe("ANALYZE tasks");
}, 120_000);
afterAll(async () => pgdb?.drop());

/** Every task the query selects, page after page, and the most task rows one page's statements read. */
async function allPages(query: ListTasksQuery): Promise<{ ids: string[]; rowsRead: number }> {
  const ids: string[] = [];
  let rowsRead = 0;
  let cursor: string | undefined;
  do {
    const { result, sent } = await captureStatements(() => listTasks(pgdb.db, { ...query, cursor }));
    ids.push(...result.items.map((t) => t.id));
    const reads = await explainStatements(pgdb.url, sent);
    rowsRead = Math.max(
      rowsRead,
      reads.reduce((n, e) => n + rowsReadFrom(e.plan, "tasks"), 0),
    );
    cursor = result.nextCursor ?? undefined;
  } while (cursor);
  return { ids, rowsRead };
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
});
