import type { Db } from "@/lib/db/client";
import type { InvariantMonitorRun } from "@/lib/generated/prisma/client";
import type { Actor } from "@/lib/model/actor";
import { raiseAlert, type RaiseAlertInput } from "@/lib/use-cases/alerts/divergence";

/**
 * What each check of an invariant-monitor pass (run-monitor-pass.ts) is
 * given, and what it reports back: the checks, their reports, and the one
 * way a check raises what it found.
 */

export const monitorActor: Actor = { identity: "spiffe://verity.local/system/invariant-monitor", kind: "system" };

export const monitorChecks = [
  "task_states",
  "success_evidence",
  "unknown_outcomes",
  "write_conflicts",
  "checkpoint_restores",
  "audit_chains",
] as const;
export type MonitorCheck = (typeof monitorChecks)[number];

export interface CheckReport {
  /** Rows (or audit streams) looked at. */
  examined: number;
  violations: number;
  /** New alerts. */
  raised: number;
  /** Sightings counted on an alert already open. */
  counted: number;
  error?: string;
}

export interface MonitorPassResult {
  /** Null when another process's pass was in progress: this one did nothing. */
  run: InvariantMonitorRun | null;
  checks: Partial<Record<MonitorCheck, CheckReport>>;
  violations: number;
  alerts: Array<{ id: string; kind: string; taskId: string; created: boolean }>;
}

export interface PassContext {
  db: Db;
  now: Date;
  batch: number;
  windowOf: (tenantId: string, tool: string, version?: number | null) => number;
  auditStreams: number;
  result: MonitorPassResult;
}

export async function raiseViolation(ctx: PassContext, report: CheckReport, input: RaiseAlertInput): Promise<void> {
  report.violations++;
  const raised = await ctx.db.$transaction((tx) => raiseAlert(tx, { source: "monitor", ...input }, monitorActor));
  if (raised.suppressed) return;
  if (raised.created) report.raised++;
  else report.counted++;
  ctx.result.alerts.push({
    id: raised.alert.id,
    kind: raised.alert.kind,
    taskId: raised.alert.taskId,
    created: raised.created,
  });
}
