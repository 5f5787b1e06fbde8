import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { placeLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { applyTaskRetention } from "@/lib/use-cases/retention/apply-task-retention";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, runningTask } from "@/tests/helpers/effects";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { retentionWalkCases } from "@/tests/helpers/retention-walk";
import { captureStatements, explainStatements, rowsReadFrom } from "@/tests/helpers/statement-plans";

/**
 * Task-data retention on PostgreSQL, with several server processes' worth
 * of runs at once (a pool of connections): each finished task is deleted by
 * exactly one run (its row is locked and re-checked), a held one by none,
 * and the audit log verifies after all of them.
 */

const admin: Actor = { identity: "spiffe://verity.local/user/admin", kind: "user" };
const thirtyDaysOn = () => Date.now() + 30 * 86_400_000;

let pgdb: PostgresTestDatabase;
beforeAll(async () => {
  pgdb = await createPostgresTestDatabase({ poolSize: 6 });
}, 120_000);
afterAll(async () => pgdb?.drop());

async function finishedTask(): Promise<string> {
  const task = await runningTask(pgdb.db);
  await transitionTask(pgdb.db, task.id, { expected_version: task.version, to: "CANCELLED", reason: "done" }, agent);
  return task.id;
}

describe("task-data retention on PostgreSQL", () => {
  it("racing runs delete each finished task once and leave a log that verifies", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await finishedTask());
    const held = ids.pop()!;
    await placeLegalHold(pgdb.db, { task_id: held, reason: "kept for a claim" }, admin);

    const runs = await Promise.all(
      Array.from({ length: 4 }, () =>
        applyTaskRetention(pgdb.db, { olderThanDays: 30, maxTasks: 3 }, admin, { clock: thirtyDaysOn }),
      ),
    );
    const again = await applyTaskRetention(pgdb.db, { olderThanDays: 30 }, admin, { clock: thirtyDaysOn });
    const deleted = [...runs, again].flatMap((r) => r.tasks.map((t) => t.id));
    expect(deleted.sort()).toEqual([...ids].sort());
    expect(again.heldTasks).toEqual([held]);

    const left = await pgdb.db.task.findMany({ where: { id: { in: [...ids, held] } }, select: { id: true } });
    expect(left.map((t) => t.id)).toEqual([held]);
    const entries = await pgdb.db.auditEntry.count({ where: { taskId: { in: ids }, stream: { startsWith: "task:" } } });
    expect(entries).toBe(0);
    expect((await verifyAuditChains(pgdb.db)).breaks).toEqual([]);
  }, 120_000);

  it("a run takes the oldest finished tasks past held ones, and names the held ones it passed", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await finishedTask());
    const [heldA, heldB, first, second, third] = ids as [string, string, string, string, string];
    for (const id of [heldA, heldB]) await placeLegalHold(pgdb.db, { task_id: id, reason: "kept for a claim" }, admin);
    // Oldest first by their last update: the held two, then the three free ones in order.
    for (const [i, id] of ids.entries())
      await pgdb.db
        .$executeRaw`UPDATE tasks SET updated_at = now() - make_interval(days => 10 - ${i}) WHERE id = ${id}`;

    const run = await applyTaskRetention(pgdb.db, { olderThanDays: 30, maxTasks: 2 }, admin, { clock: thirtyDaysOn });
    // A walk that stopped at the held tasks would take nothing, run after run.
    expect(run.tasks.map((t) => t.id)).toEqual([first, second]);
    expect(run.heldTasks).toEqual(expect.arrayContaining([heldA, heldB]));
    const next = await applyTaskRetention(pgdb.db, { olderThanDays: 30, maxTasks: 2 }, admin, { clock: thirtyDaysOn });
    expect(next.tasks.map((t) => t.id)).toEqual([third]);
  }, 120_000);

  it("a run reads its batch of tasks, not every finished one (docs/cost-growth.md)", async () => {
    const model = await finishedTask();
    // 3,000 finished tasks older than everything else: copies of one row, as bench:cost's loader makes them.
    await pgdb.db.$executeRaw`
      INSERT INTO tasks (tenant_id, id, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
                         created_at, created_by, updated_at, updated_by)
      SELECT tenant_id, id || '_copy_' || g, workflow_name, workflow_version, workflow_digest, status, version, state, intent_id,
             created_at - make_interval(days => 20, mins => g), created_by, updated_at - make_interval(days => 20, mins => g), updated_by
        FROM tasks, generate_series(1, 3000) AS g WHERE id = ${model}`;
    await pgdb.db.$executeRawUnsafe("ANALYZE tasks");

    const { result, sent } = await captureStatements(() =>
      applyTaskRetention(pgdb.db, { olderThanDays: 30, maxTasks: 2 }, admin, { clock: thirtyDaysOn }),
    );
    expect(result.tasks.map((t) => t.id)).toEqual([`${model}_copy_3000`, `${model}_copy_2999`]);
    // Two taken from the first window of the walk: the judging query (seven lookups per task) reads that window's
    // tasks. Sorting every finished task by its last activity, as runs did, judged all 3,000. (The window itself is
    // an ordered LIMIT: on a table this small the planner may read it by a scan and a top-N sort; at scale,
    // bench:cost shows it as an index range.)
    const reads = await explainStatements(pgdb.url, sent);
    const judging = reads.filter((e) => e.text.includes("finished AS"));
    expect(judging.length).toBeGreaterThan(0);
    expect(judging.reduce((n, e) => n + rowsReadFrom(e.plan, "tasks"), 0)).toBeLessThan(1_000);
  }, 120_000);
});

describe("the retention walk on PostgreSQL", () => {
  // The tasks a run's judging queries read (one per window), from its statements replayed under EXPLAIN ANALYZE.
  retentionWalkCases(
    () => pgdb,
    async (run) => {
      const { result, sent } = await captureStatements(run);
      const judging = (await explainStatements(pgdb.url, sent)).filter((e) => e.text.includes("finished AS"));
      return { result, judged: judging.reduce((n, e) => n + rowsReadFrom(e.plan, "tasks"), 0) };
    },
  );
});
