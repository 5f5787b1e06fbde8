import { afterAll, beforeAll, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { createTenant } from "@/lib/stores/tenants";
import { foldTaskCountChanges, readTaskCounts, type TaskCountRow } from "@/lib/stores/task-counts";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { countTasks, listTasks, recentTasksWindow, type RecentTasksWindow } from "@/lib/use-cases/tasks/list-tasks";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";

const agent: Actor = { identity: "spiffe://verity.test/agent/counter", kind: "agent" };
const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };

export interface CountsDatabase {
  db: Db;
  forTenant(tenantId: string): Db;
  platformDb: Db;
  close(): Promise<void>;
}

/**
 * The counts kept as tasks change (lib/stores/task-counts.ts) against the
 * tasks themselves, counted the old way: the same cases on the embedded
 * database (tests/db/task-counts.test.ts) and on PostgreSQL
 * (tests/postgres/task-counts.test.ts), where the writers and the folds
 * really run at once.
 */
export function describeTaskCounts(open: () => Promise<CountsDatabase>, options: { writers: number }): void {
  let handle: CountsDatabase;
  beforeAll(async () => {
    handle = await open();
  }, 120_000);
  afterAll(async () => {
    await handle?.close();
  });

  /** The tasks counted by reading them all, as the dashboard and the task list did before the counters. */
  async function countedByScan(db: Db): Promise<TaskCountRow[]> {
    const rows = await db.$queryRaw<TaskCountRow[]>`
      SELECT workflow_name AS workflow, status, count(*)::int AS tasks,
             sum(verity_task_budget(state, 'currency_spent_usd'))::float8 AS "usdSpent",
             sum(verity_task_budget(state, 'currency_committed_usd'))::float8 AS "usdCommitted",
             sum(verity_task_budget(state, 'tokens_spent'))::float8 AS "tokensSpent"
        FROM tasks GROUP BY workflow_name, status ORDER BY workflow_name, status`;
    return rows;
  }
  async function pendingChanges(db: Db): Promise<number> {
    const [row] = await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM task_count_changes`;
    return row!.n;
  }

  it("match the tasks counted one by one through creations, moves and budget patches, before a fold and after it", async () => {
    const { db } = handle;
    const before = await readTaskCounts(db);
    for (let i = 0; i < 6; i++) {
      const { task } = await createTask(
        db,
        {
          workflow: i % 3 === 0 ? "delivery" : "agent-task",
          intent_id: `counts-${i}`,
          budget: { currency_committed_usd: 10 },
        },
        agent,
      );
      if (task.workflow.name !== "agent-task") continue;
      let v = task.version;
      for (const to of ["PLANNING", "READY", "RUNNING"].slice(0, i))
        v = (await transitionTask(db, task.id, { expected_version: v, to }, agent)).task.version;
      // A budget patch in place: the same status, other sums (0.1 + 0.2 stays exact in the counters).
      await transitionTask(
        db,
        task.id,
        { expected_version: v, patch: { budget: { currency_spent_usd: 0.1 * i, tokens_spent: 100 * i } } },
        agent,
      );
    }
    expect(await readTaskCounts(db)).not.toEqual(before);
    expect(await pendingChanges(db)).toBeGreaterThan(0);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
    await foldTaskCountChanges(db);
    expect(await pendingChanges(db)).toBe(0);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
    // The list's total by status and workflow comes from the counters; with an id prefix it counts the rows.
    const running = (await countedByScan(db)).find((r) => r.workflow === "agent-task" && r.status === "RUNNING");
    expect(await countTasks(db, { workflow: "agent-task", status: "RUNNING" })).toEqual({
      count: running?.tasks ?? 0,
      among: null,
    });
    expect(await countTasks(db, { q: "no-such-task-" })).toEqual({ count: 0, among: null });
  });

  it("give a total and pages by actor among the most recently changed tasks when there are more than the window", async () => {
    const { db } = handle;
    const actor = { identity: `spiffe://verity.test/agent/recent-${Date.now().toString(36)}`, kind: "agent" as const };
    for (let i = 0; i < 3; i++) await createTask(db, { workflow: "delivery", intent_id: `counts-recent-${i}` }, actor);
    const all = (await countedByScan(db)).reduce((n, r) => n + r.tasks, 0);
    // Under the limit: every task is read, the count is exact.
    expect(await countTasks(db, { actor: actor.identity }, { window: await recentTasksWindow(db, all) })).toEqual({
      count: 3,
      among: null,
    });
    // Over it: the newest `scanLimit` changes only, and the total says so.
    expect(await countTasks(db, { actor: actor.identity }, { window: await recentTasksWindow(db, 2) })).toEqual({
      count: 2,
      among: 2,
    });
    expect(
      await countTasks(db, { actor: "spiffe://verity.test/agent/nobody" }, { window: await recentTasksWindow(db, 2) }),
    ).toEqual({
      count: 0,
      among: 2,
    });
    // The console's list pages look in the same window; the API's and exports' (no window) see every match.
    const ids = async (options: { window?: RecentTasksWindow | null }, limit = 50) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await listTasks(db, { actor: actor.identity, limit, ...(cursor ? { cursor } : {}) }, options);
        seen.push(...page.items.map((task) => task.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return seen;
    };
    const every = await ids({});
    expect(every).toHaveLength(3);
    expect(await ids({ window: await recentTasksWindow(db, all) })).toEqual(every);
    expect(await ids({ window: await recentTasksWindow(db, 2) })).toEqual(every.slice(0, 2));
    expect(await ids({ window: await recentTasksWindow(db, 2) }, 1)).toEqual(every.slice(0, 2));
  });

  it("write nothing for a patch that moves no count: hops used, a subtask", async () => {
    const { db } = handle;
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "counts-quiet-patch" }, agent);
    await foldTaskCountChanges(db);
    const v = (
      await transitionTask(db, task.id, { expected_version: task.version, patch: { budget: { hops_used: 1 } } }, agent)
    ).task.version;
    await transitionTask(
      db,
      task.id,
      { expected_version: v, patch: { subtasks: [{ id: "quiet", title: "Nothing to count" }] } },
      agent,
    );
    expect(await pendingChanges(db)).toBe(0);
    // A summed number does: the tokens.
    await transitionTask(db, task.id, { expected_version: v + 1, patch: { budget: { tokens_spent: 5 } } }, agent);
    expect(await pendingChanges(db)).toBe(1);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
  });

  it("count nothing of a change that rolled back", async () => {
    const { db } = handle;
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: "counts-rolled-back" }, agent);
    const counted = await readTaskCounts(db);
    // Test-only write: the trigger's insert is part of the transaction it counts.
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE tasks SET status = 'PLANNING' WHERE id = ${task.id}`;
        throw new Error("rolled back on purpose");
      }),
    ).rejects.toThrow("rolled back on purpose");
    expect(await readTaskCounts(db)).toEqual(counted);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
  });

  it("fold in bounded batches: each statement at most a batch, the rest left for the next", async () => {
    const { db } = handle;
    for (let i = 0; i < 7; i++) await createTask(db, { workflow: "delivery", intent_id: `counts-batch-${i}` }, agent);
    const pending = await pendingChanges(db);
    expect(pending).toBeGreaterThanOrEqual(7);
    expect(await foldTaskCountChanges(db, { batch: 3, maxBatches: 1 })).toBe(3);
    expect(await pendingChanges(db)).toBe(pending - 3);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
    expect(await foldTaskCountChanges(db, { batch: 3 })).toBe(pending - 3);
    expect(await pendingChanges(db)).toBe(0);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
  });

  it("stay exact with writers and two folds running at once", async () => {
    const { db } = handle;
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; i < 8; i++) {
        const { task } = await createTask(db, { workflow: "agent-task", intent_id: `counts-race-${w}-${i}` }, agent);
        let v = task.version;
        for (const to of ["PLANNING", "READY"].slice(0, i % 3))
          v = (await transitionTask(db, task.id, { expected_version: v, to }, agent)).task.version;
      }
    };
    const folder = async () => {
      let folded = 0;
      while (writing) folded += await foldTaskCountChanges(db, { batch: 5 });
      return folded;
    };
    const folds = [folder(), folder()];
    await Promise.all(Array.from({ length: options.writers }, (_, w) => writer(w)));
    writing = false;
    await Promise.all(folds);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
    await foldTaskCountChanges(db);
    expect(await pendingChanges(db)).toBe(0);
    expect(await readTaskCounts(db)).toEqual(await countedByScan(db));
  });

  it("are each tenant's own: another tenant's tasks neither show nor fold into them", async () => {
    const { platformDb, forTenant } = handle;
    const tenantId = `counts-${process.pid}-${Date.now().toString(36)}`;
    await createTenant(platformDb, { id: tenantId, name: "Counts B" }, platformActor);
    const other = forTenant(tenantId);
    await registerBuiltInWorkflows(other);
    const ours = await readTaskCounts(handle.db);
    await createTask(other, { workflow: "delivery", intent_id: "counts-other-tenant" }, agent);
    expect(await readTaskCounts(handle.db)).toEqual(ours);
    // A fold on our connection leaves the other tenant's change where it is; its own fold takes it.
    await foldTaskCountChanges(handle.db);
    expect(await pendingChanges(other)).toBe(1);
    expect(await foldTaskCountChanges(other)).toBe(1);
    expect(await readTaskCounts(other)).toEqual([
      { workflow: "delivery", status: "planning", tasks: 1, usdSpent: 0, usdCommitted: 0, tokensSpent: 0 },
    ]);
    expect(await readTaskCounts(handle.db)).toEqual(ours);
  });
}
