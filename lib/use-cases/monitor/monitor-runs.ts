import { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { InvariantMonitorRun } from "@/lib/generated/prisma/client";
import { monitorChecks } from "@/lib/use-cases/monitor/monitor-pass-context";

/**
 * The invariant monitor's run records (`invariant_monitor_runs`, written by
 * run-monitor-pass.ts), read for the console and the API, and the API's
 * request to run a pass now.
 */

/**
 * A pass renews its claim (`heartbeat_at`, the database's clock) every
 * quarter of this while it runs; one whose last renewal is older than this
 * is presumed dead (its process was killed, its machine lost) and the next
 * server that asks takes the tenant's monitor over: with the default
 * 30 s interval, within about one interval of the death (docs/scale-out.md).
 */
export const MONITOR_LEASE_MS = 20_000;

export async function latestMonitorRun(db: Db): Promise<InvariantMonitorRun | null> {
  return db.invariantMonitorRun.findFirst({
    where: { finishedAt: { not: null } },
    orderBy: [{ startedAt: "desc" }, { id: "desc" }],
  });
}

/** The monitor's health at a glance: its last finished pass, and how many passes ended in an error lately. */
export async function monitorStatus(db: Db): Promise<{ last: InvariantMonitorRun | null; runningSince: Date | null }> {
  const [last, running] = await Promise.all([
    latestMonitorRun(db),
    db.invariantMonitorRun.findFirst({
      where: { finishedAt: null, heartbeatAt: { gt: new Date(Date.now() - MONITOR_LEASE_MS) } },
      select: { startedAt: true },
    }),
  ]);
  return { last, runningSince: running?.startedAt ?? null };
}

export const MonitorRunInputSchema = z.strictObject({
  only: z.array(z.enum(monitorChecks)).min(1).optional(),
});
