import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/model/actor";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { placeLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { applyTaskRetention } from "@/lib/use-cases/retention/apply-task-retention";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, runningTask } from "@/tests/helpers/effects";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

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
});
