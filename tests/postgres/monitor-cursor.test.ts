import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { createPostgresTestDatabase, testDatabaseUrl, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { DEFAULT_TENANT_ID, tenantConnectionOptions } from "@/lib/db/tenant-sessions";

/**
 * The monitor reads the append-only write_conflicts forward from a saved
 * cursor. Its ids and timestamps are taken before commit, so a cursor on
 * (at, id) skipped for good a row of the same millisecond with a smaller
 * id, and a row that committed after a later one had been read. Here, on
 * the PostgreSQL server where a second connection can hold a transaction
 * open, every row is examined exactly once. (checkpoint_restores is read by
 * the same function.)
 */
const agent: Actor = { identity: "spiffe://verity.test/agent/a", kind: "agent" };

let db: PostgresTestDatabase;
let taskId: string;
beforeAll(async () => {
  db = await createPostgresTestDatabase();
  taskId = (await createTask(db.db, { workflow: "agent-task", intent_id: "cursor" }, agent)).task.id;
});
afterAll(async () => {
  await db?.drop();
});

const conflictSql = `INSERT INTO write_conflicts (id, task_id, actor, kind, expected_version, current_version, current_status, at)
                     VALUES ($1, $2, $3, 'version', 1, 1, 'CREATED', $4)`;

async function examined(): Promise<number> {
  const pass = await runMonitorPass(db.db, {}, { only: ["write_conflicts"] });
  return pass.checks.write_conflicts!.examined;
}

describe("the monitor's cursor over refused writes", () => {
  it("examines a row of the same millisecond as the cursor row with a smaller id", async () => {
    const at = new Date(Date.now() - 60_000);
    await db.db.$executeRawUnsafe(conflictSql, "wc_same_ms_z", taskId, agent.identity, at);
    expect(await examined()).toBe(1);
    await db.db.$executeRawUnsafe(conflictSql, "wc_same_ms_a", taskId, agent.identity, at);
    expect(await examined()).toBe(1);
    expect(await examined()).toBe(0);
  });

  it("examines a row that commits after a later row was read, once, and never a row still uncommitted", async () => {
    const late = new pg.Client({ connectionString: db.url, options: tenantConnectionOptions(DEFAULT_TENANT_ID) });
    await late.connect();
    try {
      await late.query("BEGIN");
      // Taken first (earlier time, smaller id), committed last.
      await late.query(conflictSql, ["wc_late_a", taskId, agent.identity, new Date(Date.now() - 30_000)]);
      await db.db.$executeRawUnsafe(conflictSql, "wc_late_b", taskId, agent.identity, new Date(Date.now() - 20_000));
      // The open transaction holds back everything after it: nothing is read past a row that may still appear.
      expect(await examined()).toBe(0);
      await late.query("COMMIT");
    } finally {
      await late.end();
    }
    expect(await examined()).toBe(2);
    expect(await examined()).toBe(0);
  });

  it("is not held back by a transaction running in another database of the same server", async () => {
    const elsewhere = new pg.Client({ connectionString: testDatabaseUrl() });
    await elsewhere.connect();
    try {
      await elsewhere.query("BEGIN");
      await elsewhere.query("SELECT pg_current_xact_id()"); // takes a transaction id and keeps it
      await db.db.$executeRawUnsafe(conflictSql, "wc_elsewhere", taskId, agent.identity, new Date(Date.now() - 5_000));
      expect(await examined()).toBe(1);
    } finally {
      await elsewhere.query("ROLLBACK").catch(() => undefined);
      await elsewhere.end();
    }
  });

  it("reads a large backlog in batches, each row once", async () => {
    const at = new Date(Date.now() - 10_000);
    for (let i = 0; i < 25; i++)
      await db.db.$executeRawUnsafe(conflictSql, `wc_batch_${String(i).padStart(2, "0")}`, taskId, agent.identity, at);
    let total = 0;
    for (let i = 0; i < 5; i++)
      total += (await runMonitorPass(db.db, {}, { only: ["write_conflicts"], batchSize: 10 })).checks.write_conflicts!
        .examined;
    expect(total).toBe(25);
  });

  it("after an upgrade, goes on from the (at, id) cursor of the version before, then by (xid, id)", async () => {
    const upgraded = await createPostgresTestDatabase();
    try {
      const { task } = await createTask(upgraded.db, { workflow: "agent-task", intent_id: "upgrade" }, agent);
      const old = new Date(Date.now() - 60_000);
      await upgraded.db.$executeRawUnsafe(conflictSql, "wc_up_old", task.id, agent.identity, old);
      await upgraded.db.$executeRawUnsafe(
        conflictSql,
        "wc_up_new",
        task.id,
        agent.identity,
        new Date(Date.now() - 30_000),
      );
      // The last run of the previous version had read wc_up_old.
      await upgraded.db.invariantMonitorRun.create({
        data: {
          id: "mon_before_upgrade",
          startedAt: old,
          finishedAt: old,
          checks: {},
          violations: 0,
          cursor: { write_conflicts: { at: old.toISOString(), id: "wc_up_old" } },
        },
      });
      const first = await runMonitorPass(upgraded.db, {}, { only: ["write_conflicts"] });
      expect(first.checks.write_conflicts!.examined).toBe(1);
      expect(first.run?.cursor).toMatchObject({ write_conflicts: { id: "wc_up_new", at: null } });
      expect(
        (await runMonitorPass(upgraded.db, {}, { only: ["write_conflicts"] })).checks.write_conflicts!.examined,
      ).toBe(0);
    } finally {
      await upgraded.drop();
    }
  });
});
