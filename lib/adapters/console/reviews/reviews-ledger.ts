import type { Db } from "@/lib/db/client";
import { listDivergences } from "@/lib/use-cases/alerts/divergence";
import { listExecutionEvents, listExecutions, type ExecutionView } from "@/lib/stores/execution-store";
import type { AlertStatus, ReviewStatus } from "@/lib/generated/prisma/enums";
import type { ExecutionEventView } from "@/lib/adapters/console/reviews/reviews-view";
import { reviewsOfTask } from "@/lib/adapters/console/reviews/reviews";

/**
 * The task page's "External effects": what the task did to the outside world
 * (the execution ledger), where Verity and a provider disagree (divergence
 * alerts), and the review each frozen effect waits in.
 */
export interface LedgerEntry {
  execution: ExecutionView;
  /** Oldest first. */
  events: ExecutionEventView[];
  review: { id: string; status: ReviewStatus } | null;
}

export interface DivergenceView {
  id: string;
  executionId: string | null;
  kind: string;
  severity: string;
  message: string;
  internal: unknown;
  external: unknown;
  status: AlertStatus;
  version: number;
  createdAt: Date;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  resolution: string | null;
}

export interface ExternalEffects {
  entries: LedgerEntry[];
  openAlerts: DivergenceView[];
  resolvedAlerts: DivergenceView[];
}

export function toEventView(e: Awaited<ReturnType<typeof listExecutionEvents>>[number]): ExecutionEventView {
  return {
    id: e.id,
    attemptId: e.attemptId,
    fromStatus: e.fromStatus,
    toStatus: e.toStatus,
    actor: e.actor,
    reason: e.reason,
    evidence: e.evidence,
    createdAt: e.createdAt,
  };
}

export async function loadExternalEffects(db: Db, taskId: string): Promise<ExternalEffects> {
  const [executions, alerts, reviews] = await Promise.all([
    listExecutions(db, taskId),
    listDivergences(db, { taskId }),
    reviewsOfTask(db, taskId),
  ]);
  const events = await Promise.all(executions.map((x) => listExecutionEvents(db, x.id)));
  const alertViews: DivergenceView[] = alerts.map((a) => ({
    id: a.id,
    executionId: a.executionId,
    kind: a.kind,
    severity: a.severity,
    message: a.message,
    internal: a.internal,
    external: a.external,
    status: a.status,
    version: a.version,
    createdAt: a.createdAt,
    resolvedAt: a.resolvedAt,
    resolvedBy: a.resolvedBy,
    resolution: a.resolution,
  }));
  return {
    entries: executions.map((execution, i) => ({
      execution,
      events: (events[i] ?? []).map(toEventView),
      review: reviews.get(execution.id) ?? null,
    })),
    openAlerts: alertViews.filter((a) => a.status === "OPEN"),
    resolvedAlerts: alertViews.filter((a) => a.status === "RESOLVED"),
  };
}
