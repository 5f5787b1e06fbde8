import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/core/errors";
import { countTasks, listTasks, type ListTasksQuery } from "@/lib/use-cases/tasks/list-tasks";
import { countTasksByStatus } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

const agent: Actor = { identity: "spiffe://verity.test/agent/lister", kind: "agent" };

let t: TestDatabase;
/** Tasks seeded in beforeAll, newest activity first as raw SQL sees it. */
let seeded: Array<{ id: string; status: string; workflow_name: string; updated_at: Date }>;

beforeAll(async () => {
  t = await openTestPglite();
  for (let i = 0; i < 30; i++) {
    const workflow = i % 3 === 0 ? "delivery" : "agent-task";
    const { task } = await createTask(
      t.db,
      { workflow, task_id: `list-${String(i).padStart(2, "0")}`, intent_id: "intent-list" },
      agent,
    );
    if (workflow === "agent-task" && i % 2 === 0)
      await transitionTask(t.db, task.id, { expected_version: 1, to: "PLANNING" }, agent);
    if (i % 5 === 4)
      await transitionTask(
        t.db,
        task.id,
        {
          expected_version: (await t.sql<{ version: number }>("SELECT version FROM tasks WHERE id = $1", [task.id]))[0]!
            .version,
          to: workflow === "delivery" ? "cancelled" : "CANCELLED",
        },
        agent,
      );
  }
  // Ten tasks share one updated_at to the millisecond: the page boundary
  // must then fall back on the id, or a page drops or repeats one of them.
  // Test-only write: the engine never sets timestamps by hand.
  await t.sql(
    "UPDATE tasks SET updated_at = '2026-05-05T05:05:05.555Z' WHERE id IN (SELECT id FROM tasks ORDER BY id LIMIT 10 OFFSET 5)",
  );
  seeded = await t.sql("SELECT id, status, workflow_name, updated_at FROM tasks ORDER BY updated_at DESC, id DESC");
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** The ids starting with `prefix`, newest change first (ties by id), as the list orders them. */
function seededPrefix(prefix: string, rows: Array<{ id: string; updated_at: Date }>): string[] {
  return rows
    .filter((r) => r.id.startsWith(prefix))
    .sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((r) => r.id);
}

async function allPages(
  query: Omit<ListTasksQuery, "cursor">,
  between?: (page: number) => Promise<void>,
): Promise<TaskView[][]> {
  const pages: TaskView[][] = [];
  let cursor: string | undefined;
  do {
    const page = await listTasks(t.db, { ...query, ...(cursor ? { cursor } : {}) });
    pages.push(page.items);
    cursor = page.nextCursor ?? undefined;
    if (pages.length > 100) throw new Error("paging does not end");
    await between?.(pages.length);
  } while (cursor);
  return pages;
}

describe("listTasks", () => {
  it("has a tie of ten tasks on updated_at to page through", () => {
    expect(seeded).toHaveLength(30);
    expect(new Set(seeded.map((s) => s.updated_at.getTime())).size).toBe(21);
  });

  it.each([1, 3, 7, 10, 29, 30, 200])("pages of %i visit every task once, newest activity first", async (limit) => {
    const pages = await allPages({ limit });
    const ids = pages.flat().map((task) => task.id);
    expect(ids).toEqual(seeded.map((s) => s.id));
    expect(pages.length).toBe(Math.max(1, Math.ceil(seeded.length / limit)));
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
  });

  it("is not disturbed by tasks created while paging: no duplicate, no miss", async () => {
    let created = 0;
    const pages = await allPages({ limit: 4, workflow: "agent-task" }, async () => {
      await createTask(t.db, { workflow: "agent-task", task_id: `late-${++created}`, intent_id: "intent-late" }, agent);
    });
    const ids = pages.flat().map((task) => task.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(seeded.filter((s) => s.workflow_name === "agent-task").map((s) => s.id));
    expect(created).toBeGreaterThan(3);
    await t.sql("DELETE FROM transitions WHERE task_id LIKE 'late-%'");
    await t.sql("DELETE FROM tasks WHERE id LIKE 'late-%'");
  });

  it.each<[string, Omit<ListTasksQuery, "cursor">, (s: (typeof seeded)[number]) => boolean]>([
    ["status", { status: "PLANNING" }, (s) => s.status === "PLANNING"],
    ["workflow", { workflow: "delivery" }, (s) => s.workflow_name === "delivery"],
    [
      "status and workflow",
      { status: "cancelled", workflow: "delivery" },
      (s) => s.status === "cancelled" && s.workflow_name === "delivery",
    ],
    ["id prefix", { q: "list-1" }, (s) => s.id.startsWith("list-1")],
    [
      "id prefix and status",
      { q: "list-2", status: "RECEIVED" },
      (s) => s.id.startsWith("list-2") && s.status === "RECEIVED",
    ],
  ])("filters by %s across pages", async (_what, query, matches) => {
    const expected = seeded.filter(matches).map((s) => s.id);
    expect(expected.length).toBeGreaterThan(1);
    const ids = (await allPages({ ...query, limit: 2 })).flat().map((task) => task.id);
    expect(ids).toEqual(expected);
  });

  it.each([1, 4, 30])("by creation, pages of %i visit every task once, both ways, ties broken by id", async (limit) => {
    // Test-only write: eight tasks created in the same millisecond.
    await t.sql(
      "UPDATE tasks SET created_at = '2026-04-04T04:04:04.444Z' WHERE id IN (SELECT id FROM tasks ORDER BY id DESC LIMIT 8 OFFSET 3)",
    );
    for (const order of ["desc", "asc"] as const) {
      const expected = (
        await t.sql<{ id: string }>(
          `SELECT id FROM tasks WHERE workflow_name = 'agent-task' ORDER BY created_at ${order}, id ${order}`,
        )
      ).map((r) => r.id);
      const pages = await allPages({ sort: "created", order, limit, workflow: "agent-task" });
      expect(pages.flat().map((task) => task.id)).toEqual(expected);
    }
  });

  it("refuses a cursor of the other order rather than paging wrongly", async () => {
    const byUpdate = (await listTasks(t.db, { limit: 2 })).nextCursor!;
    const byCreation = (await listTasks(t.db, { limit: 2, sort: "created" })).nextCursor!;
    await expect(listTasks(t.db, { sort: "created", cursor: byUpdate })).rejects.toMatchObject({
      code: "validation_failed",
    });
    await expect(listTasks(t.db, { cursor: byCreation })).rejects.toMatchObject({ code: "validation_failed" });
  });

  it("returns an empty last page and a null cursor when nothing matches", async () => {
    expect(await listTasks(t.db, { status: "NO_SUCH_STATUS" })).toEqual({ items: [], nextCursor: null });
    expect(await listTasks(t.db, { q: "zzz" })).toEqual({ items: [], nextCursor: null });
  });

  it("treats the id prefix literally, not as a LIKE pattern", async () => {
    // Ids may contain "_", which LIKE reads as "any character".
    await createTask(t.db, { workflow: "agent-task", task_id: "lk_a", intent_id: "intent-like" }, agent);
    await createTask(t.db, { workflow: "agent-task", task_id: "lkxa", intent_id: "intent-like" }, agent);
    try {
      expect((await listTasks(t.db, { q: "lk_" })).items.map((task) => task.id)).toEqual(["lk_a"]);
      expect((await listTasks(t.db, { q: "lkxa" })).items.map((task) => task.id)).toEqual(["lkxa"]);
      expect((await listTasks(t.db, { q: "%" })).items).toEqual([]);
      expect((await listTasks(t.db, { q: "\\" })).items).toEqual([]);
    } finally {
      await t.sql("DELETE FROM transitions WHERE task_id IN ('lk_a', 'lkxa')");
      await t.sql("DELETE FROM tasks WHERE id IN ('lk_a', 'lkxa')");
    }
  });

  it("pages a prefix more tasks share than it looks up by id (1,000) the same: complete, in order, '_' literal", async () => {
    // 1,100 copies of one task, 'bulk_0001' … (changed a minute apart), and 'bulkx…' which '_' as LIKE's
    // any-character would match. Test-only writes, as bench:cost's loader makes its tasks.
    await t.sql(`
      INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state,
                         intent_id, created_at, created_by, updated_at, updated_by)
      SELECT tenant_id, CASE WHEN g <= 1100 THEN 'bulk_' || lpad(g::text, 4, '0') ELSE 'bulkx' || g END,
             workflow_name, workflow_version, workflow_digest, status, version, state, intent_id, created_at,
             created_by, updated_at - make_interval(mins => g), updated_by
        FROM tasks, generate_series(1, 1103) AS g WHERE id = 'list-00'`);
    try {
      const expected = seededPrefix("bulk_", await t.sql("SELECT id, updated_at FROM tasks"));
      expect(expected).toHaveLength(1_100);
      for (const limit of [200, 13]) {
        const ids = (await allPages({ q: "bulk_", limit })).flat().map((task) => task.id);
        expect(ids).toEqual(expected);
      }
      // Fewer than the lookup's bound, by id, the same way.
      const few = (await allPages({ q: "bulk_00", limit: 7 })).flat().map((task) => task.id);
      expect(few).toEqual(expected.filter((id) => id.startsWith("bulk_00")));
      expect(few).toHaveLength(99);
      expect(await countTasks(t.db, { q: "bulk_" })).toEqual({ count: 1_100, among: null });
      expect(await countTasks(t.db, { q: "bulk_00" })).toEqual({ count: 99, among: null });
    } finally {
      await t.sql("DELETE FROM tasks WHERE id LIKE 'bulk%'");
    }
  });

  it("refuses a cursor it did not issue", async () => {
    for (const cursor of [
      "nope",
      Buffer.from("[1,2]").toString("base64url"),
      Buffer.from('["2026-01-01T00:00:00.000Z"]').toString("base64url"),
    ]) {
      const error = await listTasks(t.db, { cursor }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("validation_failed");
    }
  });

  it("refuses a limit out of range", async () => {
    for (const limit of [0, 201, 1.5]) {
      await expect(listTasks(t.db, { limit })).rejects.toMatchObject({ code: "validation_failed" });
    }
  });
});

describe("countTasksByStatus", () => {
  it("matches a GROUP BY over the table", async () => {
    const rows = await t.sql<{ workflow_name: string; status: string; n: number }>(
      "SELECT workflow_name, status, count(*)::int AS n FROM tasks GROUP BY 1, 2",
    );
    const expected = rows.map((r) => ({ workflow: r.workflow_name, status: r.status, count: r.n }));
    const byKey = (a: { workflow: string; status: string }, b: { workflow: string; status: string }) =>
      `${a.workflow}/${a.status}`.localeCompare(`${b.workflow}/${b.status}`);
    expect((await countTasksByStatus(t.db)).sort(byKey)).toEqual(expected.sort(byKey));
    expect(expected.reduce((n, r) => n + r.count, 0)).toBe(30);
  });
});
