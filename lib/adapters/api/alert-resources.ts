import { z } from "zod";
import type { AuditEntry, DivergenceAlert, InvariantMonitorRun } from "@/lib/generated/prisma/client";
import {
  alertKinds,
  alertSeverities,
  alertStatuses,
  describeAlertKind,
  isBlocking,
} from "@/lib/model/alerts/alert-kinds";
import type { EscalationResult } from "@/lib/use-cases/alerts/divergence";
import type { AlertReconcileResult } from "@/lib/use-cases/alerts/alert-actions";

/** The alerts centre's API shapes (snake_case, like every /api/v1 resource), and the zod schemas lib/adapters/openapi/alert-paths.ts and monitor-paths.ts document them with. */

export const AlertResourceSchema = z.object({
  id: z.string(),
  kind: z.enum(alertKinds as unknown as [string, ...string[]]).or(z.string()),
  kind_text: z.string(),
  severity: z.enum(alertSeverities).or(z.string()),
  status: z.enum(alertStatuses as unknown as [string, ...string[]]),
  /** True while it stops irreversible intents on its task. */
  blocking: z.boolean(),
  message: z.string(),
  task_id: z.string().nullable(),
  execution_id: z.string().nullable(),
  review_id: z.string().nullable(),
  source: z.string(),
  fingerprint: z.string().nullable(),
  occurrences: z.number().int(),
  internal: z.unknown(),
  external: z.unknown(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  last_seen_at: z.string(),
  resolved_at: z.string().nullable(),
  resolved_by: z.string().nullable(),
  resolution: z.string().nullable(),
});

export const AlertPageSchema = z.object({ items: z.array(AlertResourceSchema), next_cursor: z.string().nullable() });

export const AlertHistoryEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  action: z.string(),
  actor: z.string(),
  details: z.unknown(),
});
export const AlertDetailSchema = AlertResourceSchema.extend({ history: z.array(AlertHistoryEntrySchema) });

export const EscalationResultSchema = z.object({
  alert: AlertResourceSchema,
  task: z.object({
    moved: z.boolean(),
    status: z.string().nullable(),
    version: z.number().int().nullable(),
    note: z.string(),
  }),
});
export const AlertReconcileResultSchema = z.object({
  alert: AlertResourceSchema,
  agreed: z.boolean(),
  summary: z.string(),
  evidence: z.unknown(),
  reconciled: z.object({ action: z.string() }).loose(),
});

export const MonitorRunResourceSchema = z.object({
  id: z.string(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  checks: z.unknown(),
  violations: z.number().int(),
  cursor: z.unknown(),
  error: z.string().nullable(),
});
export const MonitorRunListSchema = z.object({ items: z.array(MonitorRunResourceSchema) });
export const MonitorPassResultSchema = z.object({
  run: MonitorRunResourceSchema.nullable(),
  skipped: z.boolean(),
  violations: z.number().int(),
  alerts: z.array(z.object({ id: z.string(), kind: z.string(), task_id: z.string(), created: z.boolean() })),
});

export function alertResource(a: DivergenceAlert): z.infer<typeof AlertResourceSchema> {
  return {
    id: a.id,
    kind: a.kind,
    kind_text: describeAlertKind(a.kind),
    severity: a.severity,
    status: a.status,
    blocking: isBlocking(a),
    message: a.message,
    task_id: a.taskId || null,
    execution_id: a.executionId,
    review_id: a.reviewId,
    source: a.source,
    fingerprint: a.fingerprint,
    occurrences: a.occurrences,
    internal: a.internal,
    external: a.external,
    version: a.version,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
    last_seen_at: a.lastSeenAt.toISOString(),
    resolved_at: a.resolvedAt?.toISOString() ?? null,
    resolved_by: a.resolvedBy,
    resolution: a.resolution,
  };
}

export function alertDetailResource(a: DivergenceAlert, history: AuditEntry[]): z.infer<typeof AlertDetailSchema> {
  return {
    ...alertResource(a),
    history: history.map((e) => ({
      id: e.id,
      at: e.at.toISOString(),
      action: e.action,
      actor: e.actor,
      details: e.details,
    })),
  };
}

export function escalationResource(r: EscalationResult): z.infer<typeof EscalationResultSchema> {
  return { alert: alertResource(r.alert), task: r.task };
}

export function reconcileResource(r: AlertReconcileResult): z.infer<typeof AlertReconcileResultSchema> {
  return {
    alert: alertResource(r.alert),
    agreed: r.finding.agreed,
    summary: r.finding.summary,
    evidence: r.finding.evidence,
    reconciled: r.reconciled,
  };
}

export function monitorRunResource(r: InvariantMonitorRun): z.infer<typeof MonitorRunResourceSchema> {
  return {
    id: r.id,
    started_at: r.startedAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
    checks: r.checks,
    violations: r.violations,
    cursor: r.cursor,
    error: r.error,
  };
}
