import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import type { MonitorWorkerCommand, MonitorWorkerMessage } from "@/tests/postgres/monitor-pass-worker";

/**
 * Several servers share the invariant monitor: one pass per tenant per
 * interval (tests/db/monitor-interval.test.ts). A server killed in the
 * middle of its pass must not hold the tenant's monitor for long: its claim
 * lapses when it stops renewing it, and the next server that asks takes
 * over. Here the pass runs in its own process, held mid-pass by a lock on
 * the table its first check reads, renews its claim while it waits, and is
 * SIGKILLed; this process is the other server.
 */
const leaseMs = 2_000;
const everyMs = 3_000;
let database: PostgresTestDatabase;
let child: ChildProcess | null = null;
const locker = () => new pg.Client({ connectionString: database.url });

beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 4 });
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await database?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function openRun(): Promise<{ id: string; heartbeatAt: Date } | null> {
  return database.db.invariantMonitorRun.findFirst({
    where: { finishedAt: null },
    select: { id: true, heartbeatAt: true },
  });
}

describe("a monitor pass whose server is killed", () => {
  it("is renewed while its holder lives, and taken over within the lease once it is SIGKILLed", async () => {
    // The pass's first check reads tasks: held here, the pass waits mid-pass with its claim made.
    const lock = locker();
    await lock.connect();
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE");
    try {
      const worker = fork(path.join(import.meta.dirname, "monitor-pass-worker.ts"), [], {
        execArgv: ["--import", "tsx"],
        env: { ...process.env, VERITY_WORKER_DATABASE_URL: database.url },
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      child = worker;
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        worker.once("exit", (_code, signal) => resolve(signal)),
      );
      await new Promise<void>((resolve, reject) => {
        worker.once("message", (m: MonitorWorkerMessage) =>
          m.type === "ready" ? resolve() : reject(new Error(JSON.stringify(m))),
        );
        worker.once("exit", () => reject(new Error("the worker exited before it was ready")));
      });
      worker.send({ type: "run", everyMs, leaseMs } satisfies MonitorWorkerCommand);
      let claimed = await openRun();
      for (let i = 0; !claimed && i < 200; i++) {
        await sleep(100);
        claimed = await openRun();
      }
      expect(claimed, "the worker's pass made its claim").not.toBeNull();

      // Twice the lease while its holder lives: renewed, so no other server starts a pass,
      // not even a person's request (which ignores the interval).
      await sleep(2 * leaseMs);
      expect((await runMonitorPass(database.db, {}, { everyMs, leaseMs })).run).toBeNull();
      expect((await runMonitorPass(database.db, {}, { leaseMs })).run).toBeNull();
      const renewed = await openRun();
      expect(renewed?.id).toBe(claimed!.id);
      expect(renewed!.heartbeatAt.getTime()).toBeGreaterThan(claimed!.heartbeatAt.getTime());

      worker.kill("SIGKILL");
      const killedAt = Date.now();
      expect(await exited).toBe("SIGKILL");
      child = null;
      await lock.query("ROLLBACK");

      // This server's background loop asking every 100 ms.
      let takenOver = null;
      while (!takenOver && Date.now() - killedAt < 60_000) {
        takenOver = (await runMonitorPass(database.db, {}, { everyMs, leaseMs })).run;
        if (!takenOver) await sleep(100);
      }
      const afterMs = Date.now() - killedAt;
      expect(takenOver, "another server took the monitor over").not.toBeNull();
      // Not before the dead claim lapsed (its last renewal was at most a quarter lease before the kill),
      // and promptly after: the lease and one asking period, with room for a busy machine.
      expect(afterMs).toBeGreaterThanOrEqual(leaseMs * 0.75 - 250);
      expect(afterMs).toBeLessThan(leaseMs * 3);
      expect(takenOver).toMatchObject({ finishedAt: expect.any(Date), error: null });

      const dead = await database.db.invariantMonitorRun.findUniqueOrThrow({ where: { id: claimed!.id } });
      expect(dead.finishedAt).not.toBeNull();
      expect(dead.error).toMatch(/^abandoned: its server stopped renewing its claim/);
      expect(await database.db.invariantMonitorRun.count({ where: { finishedAt: null } })).toBe(0);
      console.log(`monitor taken over ${afterMs} ms after its holder was SIGKILLed (lease ${leaseMs} ms)`);
    } finally {
      await lock.end().catch(() => undefined);
    }
  });
});
