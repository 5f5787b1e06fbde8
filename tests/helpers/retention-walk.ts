import { beforeAll, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import {
  applyTaskRetention,
  MAX_TASKS_READ_PER_RUN,
  type TaskRetentionResult,
} from "@/lib/use-cases/retention/apply-task-retention";
import { scheduledTaskRetention } from "@/lib/use-cases/retention/apply-retention-policy";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, runningTask } from "@/tests/helpers/effects";
import type { TenantDatabases } from "@/tests/helpers/tenant-wide-hold";

/**
 * The retention walk's bound and its liveness (docs/cost-growth.md, "The
 * retention run"), on a tenant of its own: more kept tasks past the cutoff
 * (still running) than one run reads, ahead of finished ones. A run reads at
 * most its bound and stops there; the next resumes where it stopped,
 * reaches the finished ones behind, and wraps round to the oldest, where a
 * task that finished meanwhile is taken. Where a run stopped moves with its
 * deletions or not at all. The same cases on the embedded database
 * (tests/db/task-retention.test.ts) and on PostgreSQL
 * (tests/postgres/task-retention.test.ts), which also counts, from the
 * run's own statements replayed under EXPLAIN ANALYZE, the tasks its
 * judging queries read.
 */

const platformAdmin: Actor = { identity: "system:cli", kind: "system" };
const thirtyDaysOn = () => Date.now() + 30 * 86_400_000;
const tenant = "walk";

/** Tasks the run's judging queries read, when the database can tell (PostgreSQL: its statements replayed). */
export type JudgedRows = (
  run: () => Promise<TaskRetentionResult>,
) => Promise<{ result: TaskRetentionResult; judged: number | null }>;

/** `n` copies of the task, `daysAgo` days and g minutes (g = 1…n: copy n is the oldest) before now, in `status`. */
async function copies(db: Db, model: string, suffix: string, n: number, daysAgo: number, status: string) {
  await db.$executeRaw`
    INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                       created_at, created_by, updated_at, updated_by)
    SELECT tenant_id, id || ${suffix} || g, workflow_name, workflow_version, workflow_digest, ${status}, version, state,
           intent_id, now() - make_interval(days => ${daysAgo}, mins => g), created_by,
           now() - make_interval(days => ${daysAgo}, mins => g), updated_by
      FROM tasks, generate_series(1, ${n}::int) AS g WHERE id = ${model}`;
}

/**
 * Past the cutoff, oldest first: 300 more running tasks than one run reads,
 * then five finished ones, then the finished model they are copied from.
 * `behind`: the finished ones, in the order a run deletes them.
 */
async function keptAheadOfFinished(db: Db): Promise<{ model: string; kept: number; behind: string[] }> {
  const finished = await runningTask(db);
  await transitionTask(db, finished.id, { expected_version: finished.version, to: "CANCELLED", reason: "done" }, agent);
  const model = finished.id;
  await db.$executeRaw`UPDATE tasks SET updated_at = now() - make_interval(days => 50) WHERE id = ${model}`;
  const kept = MAX_TASKS_READ_PER_RUN + 300;
  await copies(db, model, "_kept_", kept, 60, "RUNNING");
  await copies(db, model, "_done_", 5, 55, "CANCELLED");
  return { model, kept, behind: [5, 4, 3, 2, 1].map((g) => `${model}_done_${g}`).concat(model) };
}

export function retentionWalkCases(databases: () => TenantDatabases, judgedRows: JudgedRows): void {
  let t: TenantDatabases;
  let db: Db;
  beforeAll(async () => {
    t = databases();
    await openTenant(t, { id: tenant, name: "Walk" }, platformAdmin);
    db = t.forTenant(tenant);
  });

  const position = async () =>
    (
      await t.platformDb.$queryRawUnsafe<Array<{ after_id: string | null }>>(
        "SELECT after_id FROM task_retention_walks WHERE tenant_id = $1",
        tenant,
      )
    )[0]?.after_id ?? null;
  const exists = async (id: string) =>
    (await t.platformDb.$queryRawUnsafe<unknown[]>("SELECT 1 FROM tasks WHERE id = $1", id)).length > 0;
  const run = () => applyTaskRetention(db, { olderThanDays: 30 }, platformAdmin, { clock: thirtyDaysOn });

  it("reads at most its bound a run; the next runs resume there, reach the finished tasks behind, and wrap round", async () => {
    const { model, kept, behind } = await keptAheadOfFinished(db);

    // The first run reads its bound of running tasks and stops there: nothing deleted, nothing recorded.
    const first = await judgedRows(run);
    expect(first.result).toMatchObject({ tasks: [], entry: null });
    expect(first.result.walk).toEqual({
      tasksRead: MAX_TASKS_READ_PER_RUN,
      resumed: false,
      reachedCutoff: false,
      stopped: "bound",
    });
    if (first.judged !== null) expect(first.judged).toBeLessThanOrEqual(MAX_TASKS_READ_PER_RUN);
    expect(await position()).toBe(`${model}_kept_${kept - MAX_TASKS_READ_PER_RUN + 1}`);

    // The oldest running task finishes meanwhile, behind where the walk now is.
    const oldest = `${model}_kept_${kept}`;
    await db.$executeRaw`UPDATE tasks SET status = 'CANCELLED' WHERE id = ${oldest}`;

    // A run that fails deletes nothing and leaves where the walk stopped as it was.
    await t.platformDb.$executeRawUnsafe(`CREATE FUNCTION refuse_walk_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test'; END $$`);
    await t.platformDb.$executeRawUnsafe(
      "CREATE TRIGGER refuse_walk_delete BEFORE DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION refuse_walk_delete()",
    );
    try {
      await expect(run()).rejects.toThrow(/refused for the test/);
    } finally {
      await t.platformDb.$executeRawUnsafe("DROP TRIGGER refuse_walk_delete ON tasks");
      await t.platformDb.$executeRawUnsafe("DROP FUNCTION refuse_walk_delete()");
    }
    expect(await position()).toBe(`${model}_kept_${kept - MAX_TASKS_READ_PER_RUN + 1}`);

    // The next run resumes: the 300 running tasks left, the finished ones behind them, then round to the oldest.
    const second = await judgedRows(run);
    expect(second.result.tasks.map((x) => x.id)).toEqual([...behind, oldest]);
    expect(second.result.walk).toMatchObject({ resumed: true, reachedCutoff: true, stopped: "bound" });
    expect(second.result.walk.tasksRead).toBeLessThanOrEqual(MAX_TASKS_READ_PER_RUN);
    if (second.judged !== null) expect(second.judged).toBeLessThanOrEqual(MAX_TASKS_READ_PER_RUN);
    for (const id of [...behind, oldest]) expect(await exists(id)).toBe(false);

    // And the one after goes on from there, still within its bound, with nothing left to delete.
    const third = await judgedRows(run);
    expect(third.result).toMatchObject({ tasks: [], entry: null, walk: { resumed: true, stopped: "bound" } });
    expect(third.result.walk.tasksRead).toBeLessThanOrEqual(MAX_TASKS_READ_PER_RUN);
    const [left] = await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM tasks`;
    expect(left?.n).toBe(kept - 1);
    // The walk's position is the tenant's own: the first tenant's client does not see it.
    expect(await t.db.$queryRaw`SELECT tenant_id FROM task_retention_walks WHERE tenant_id = ${tenant}`).toEqual([]);
  }, 120_000);

  it("a pass begun at the oldest (the CLI's) goes on run after run until it has walked to the cutoff", async () => {
    const [{ model } = { model: "" }] = await db.$queryRaw<Array<{ model: string }>>`
      SELECT split_part(id, '_kept_', 1) AS model FROM tasks LIMIT 1`;
    const kept = MAX_TASKS_READ_PER_RUN + 299;
    // Two of the running tasks finish: one the first run of the pass reaches, and the newest, which only the next does.
    const [middle, newest] = [`${model}_kept_1000`, `${model}_kept_1`];
    await db.$executeRaw`UPDATE tasks SET status = 'CANCELLED' WHERE id IN (${middle}, ${newest})`;

    const runs: TaskRetentionResult[] = [];
    for (let i = 0; i < 10; i++) {
      const result = await applyTaskRetention(db, { olderThanDays: 30 }, platformAdmin, {
        clock: thirtyDaysOn,
        fromOldest: i === 0,
      });
      runs.push(result);
      if (result.walk.reachedCutoff) break;
    }
    expect(runs.map((r) => r.tasks.map((x) => x.id))).toEqual([[middle], [newest]]);
    expect(runs.map((r) => r.walk)).toEqual([
      { tasksRead: MAX_TASKS_READ_PER_RUN, resumed: false, reachedCutoff: false, stopped: "bound" },
      // The 299 left up to the cutoff, then from the oldest again until its windows are used.
      { tasksRead: expect.any(Number) as number, resumed: true, reachedCutoff: true, stopped: "bound" },
    ]);
    expect(runs[1]!.walk.tasksRead).toBeLessThanOrEqual(MAX_TASKS_READ_PER_RUN);
    const [left] = await db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM tasks`;
    expect(left?.n).toBe(kept - 2);
  }, 120_000);

  it("the background loop's step goes on past a run that stopped at its bound, to the cutoff, and no further", async () => {
    // A tenant of its own, its walk at the oldest: more running tasks than one run reads, then finished ones.
    const own = "walk-step";
    await openTenant(t, { id: own, name: "Walk step" }, platformAdmin);
    const stepDb = t.forTenant(own);
    const { kept, behind } = await keptAheadOfFinished(stepDb);

    // Each run writes where the walk stopped: counted by a trigger of the test's own.
    await t.platformDb.$executeRawUnsafe("CREATE TABLE walk_step_writes (at timestamptz DEFAULT clock_timestamp())");
    await t.platformDb.$executeRawUnsafe(`CREATE FUNCTION count_walk_step_write() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN INSERT INTO walk_step_writes DEFAULT VALUES; RETURN NEW; END $$`);
    await t.platformDb
      .$executeRawUnsafe(`CREATE TRIGGER count_walk_step_write AFTER INSERT OR UPDATE ON task_retention_walks
      FOR EACH ROW WHEN (NEW.tenant_id = '${own}') EXECUTE FUNCTION count_walk_step_write()`);
    let runs: TaskRetentionResult[] | null;
    let runsMade: number;
    try {
      // One tick: the first run reads its bound of running tasks and deletes nothing; the step goes on, and the
      // second reaches the finished ones and the cutoff, and the step stops there.
      const step = scheduledTaskRetention({ olderThanDays: 30, everyMs: 3_600_000 }, thirtyDaysOn);
      runs = await step(stepDb);
      const [writes] = await t.platformDb.$queryRawUnsafe<Array<{ n: number }>>(
        "SELECT count(*)::int AS n FROM walk_step_writes",
      );
      runsMade = writes?.n ?? 0;
      // Paced: the next tick within the interval runs nothing.
      expect(await step(stepDb)).toBeNull();
    } finally {
      await t.platformDb.$executeRawUnsafe("DROP TRIGGER count_walk_step_write ON task_retention_walks");
      await t.platformDb.$executeRawUnsafe("DROP FUNCTION count_walk_step_write()");
      await t.platformDb.$executeRawUnsafe("DROP TABLE walk_step_writes");
    }
    // Two runs, not a third: going on past the cutoff would read the same running tasks again in one tick.
    expect(runsMade).toBe(2);
    expect(runs?.map((r) => r.tasks.map((x) => x.id))).toEqual([behind]);
    expect(runs?.[0]?.walk).toMatchObject({ resumed: true, reachedCutoff: true });
    const [left] = await stepDb.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM tasks`;
    expect(left?.n).toBe(kept);
  }, 120_000);
}
