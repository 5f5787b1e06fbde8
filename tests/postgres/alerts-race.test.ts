import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raiseAlert } from "@/lib/use-cases/alerts/divergence";
import { monitorActor } from "@/lib/use-cases/monitor/monitor-pass-context";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * The alerts' dedupe and the monitor's single pass on the PostgreSQL
 * server, where transactions really run at once (PGlite serializes them):
 * raisers of one problem racing on separate connections leave one alert
 * that counted every sighting, and monitors started together make one pass.
 */
const RAISERS = 8;
const agent: Actor = { identity: "spiffe://verity.test/agent/a", kind: "agent" };

let db: PostgresTestDatabase;
beforeAll(async () => {
  db = await createPostgresTestDatabase({ poolSize: RAISERS + 2 });
});
afterAll(async () => {
  await db?.drop();
});

describe("alerts on PostgreSQL", () => {
  it(`${RAISERS} raisers of the same fingerprint at once: one alert, ${RAISERS} occurrences, one raised audit entry`, async () => {
    const { task } = await createTask(db.db, { workflow: "agent-task", intent_id: "race" }, agent);
    const results = await Promise.all(
      Array.from({ length: RAISERS }, (_, i) =>
        db.db.$transaction((tx) =>
          raiseAlert(
            tx,
            {
              taskId: task.id,
              kind: "stale_write",
              message: `sighting ${i}`,
              internal: {},
              external: {},
              fingerprint: `race:${task.id}`,
              source: "monitor",
            },
            monitorActor,
          ),
        ),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const alerts = await db.db.divergenceAlert.findMany({ where: { taskId: task.id } });
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.occurrences).toBe(RAISERS);
    expect(await db.db.auditEntry.count({ where: { stream: `divergence_alert:${alerts[0]!.id}` } })).toBe(1);
  });

  it("monitor passes started together never overlap: each either runs alone or steps aside", async () => {
    const passes = await Promise.all(
      Array.from({ length: 6 }, () => runMonitorPass(db.db, {}, { only: ["task_states"] })),
    );
    const ran = passes.filter((p) => p.run !== null);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    const runs = await db.db.invariantMonitorRun.findMany({ orderBy: { startedAt: "asc" } });
    expect(runs).toHaveLength(ran.length);
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.startedAt.getTime()).toBeGreaterThanOrEqual(runs[i - 1]!.finishedAt!.getTime());
  });
});
