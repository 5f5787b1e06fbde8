import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSeeded, seedDemoData, seedMarkerOf } from "@/programs/seed/seed";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { queryOf, snapshotDatabase } from "@/tests/startup/helpers";

/**
 * The seeded demo shows the lifecycle, and claims no side effect: every
 * refund, unknown outcome, reconciliation and review in a fresh console
 * comes from real agent runs (programs/demo/), never from here.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await openTestPglite();
  await seedDemoData(t.db, { extraTasks: 12 });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe("demo seed", () => {
  it("writes no execution, review or divergence, and no task in a state only an effect leads to", async () => {
    for (const table of ["executions", "execution_events", "reviews", "divergence_alerts", "inbox_events"]) {
      expect((await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n, table).toBe(0);
    }
    const effectStates = ["WAITING_FOR_TOOL", "RECONCILING", "VALIDATING", "COMPLETED", "RECOVERING", "HUMAN_RESOLVED"];
    const rows = await t.sql<{ id: string; status: string }>(
      "SELECT id, status FROM tasks WHERE workflow_name = 'agent-task' AND status = ANY($1)",
      [effectStates],
    );
    expect(rows).toEqual([]);
  });

  it("keeps the lifecycle variety, with one escalation before any refund, and the delivery workflow", async () => {
    const byStatus = await t.sql<{ workflow_name: string; status: string; n: number }>(
      "SELECT workflow_name, status, count(*)::int AS n FROM tasks GROUP BY 1, 2",
    );
    const count = (workflow: string, status: string) =>
      byStatus.find((r) => r.workflow_name === workflow && r.status === status)?.n ?? 0;
    for (const status of ["RECEIVED", "PLANNING", "READY", "RUNNING", "CANCELLED", "PERMANENTLY_FAILED"])
      expect(count("agent-task", status), status).toBeGreaterThan(1);
    expect(count("agent-task", "WAITING_FOR_HUMAN")).toBe(1);
    expect(count("delivery", "complete")).toBe(1);
    expect(await isSeeded(t.db)).toBe(true);
  });
});

describe("an interrupted seed", () => {
  it("run again after being stopped at any of its writes, ends with the rows of a seed run straight through; isSeeded only once the marker is written", async () => {
    const straight = await openTestPglite();
    const interrupted = await openTestPglite();
    try {
      await seedDemoData(straight.db, { extraTasks: 2 });
      // Stop at the first fault point of each run (a throw where a kill would
      // be; the real kills are tests/startup/ and tests/postgres/startup-kill),
      // then start again: each run gets one write further than the last.
      let stops = 0;
      for (;;) {
        let stoppedAt: string | undefined;
        const stop = new Error("stopped");
        try {
          await seedDemoData(interrupted.db, {
            extraTasks: 2,
            faultPoint: (point) => {
              stoppedAt = point;
              throw stop;
            },
          });
          break;
        } catch (error) {
          if (error !== stop) throw error;
          stops++;
          // The marker is the last write: only a stop after it finds the database seeded.
          expect(await isSeeded(interrupted.db), stoppedAt).toBe(stoppedAt === "seed:done");
        }
      }
      expect(stops).toBeGreaterThan(40);
      expect(await isSeeded(interrupted.db)).toBe(true);
      expect(await snapshotDatabase(queryOf(interrupted.platformDb))).toEqual(
        await snapshotDatabase(queryOf(straight.platformDb)),
      );
      // And a seeded database is left alone.
      expect(await seedDemoData(interrupted.db, { extraTasks: 2 })).toEqual({
        tasks: 0,
        seedId: await seedMarkerOf(interrupted.db),
      });
    } finally {
      await Promise.all([straight.close(), interrupted.close()]);
    }
  }, 120_000);
});
