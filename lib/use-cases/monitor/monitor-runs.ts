import { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { InvariantMonitorRun } from "@/lib/generated/prisma/client";
import { monitorChecks } from "@/lib/use-cases/monitor/monitor-pass-context";

/**
 * The invariant monitor's run records (`invariant_monitor_runs`, written by
 * run-monitor-pass.ts), read for the console and the API, and the API's
 * request to run a pass now.
 */

/** A pass not finished within this is presumed dead (its process crashed): the next may start. */
export const STALE_RUN_MS = 5 * 60 * 1000;

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
      where: { finishedAt: null, startedAt: { gt: new Date(Date.now() - STALE_RUN_MS) } },
      select: { startedAt: true },
    }),
  ]);
  return { last, runningSince: running?.startedAt ?? null };
}

export const MonitorRunInputSchema = z.strictObject({
  only: z.array(z.enum(monitorChecks)).min(1).optional(),
});
