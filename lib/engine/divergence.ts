import type { Db, Tx } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { DivergenceAlert, Execution, Prisma } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/ids";
import { succeededStatuses } from "@/lib/engine/execution-rules";
import { divergenceAuditEntry } from "@/lib/engine/audit-events";
import { appendAuditEntry } from "@/lib/engine/audit-log";
import type { Actor } from "@/lib/engine/tasks";

/**
 * The owner of `divergence_alerts`: internal state and an external system
 * disagree. While an alert is open on a task, nothing irreversible proceeds
 * on it (lib/engine/executions.ts asks hasOpenDivergence before every
 * irreversible intent). Severity follows the audit's risk matrix.
 */
export type DivergenceKind =
  | "effect_missing_at_provider" // we recorded success, the provider has no such effect
  | "effect_found_after_failure" // we recorded failure, the provider has the effect
  | "effect_mismatch" // the provider's effect differs from what we asked (amount, customer)
  | "effect_after_task_ended" // an irreversible effect succeeded on a task that was already cancelled or failed
  | "completed_with_open_mandatory_subtask";

export const severityOf: Record<DivergenceKind, "critical" | "high"> = {
  effect_missing_at_provider: "critical",
  effect_found_after_failure: "critical",
  effect_mismatch: "critical",
  effect_after_task_ended: "critical",
  completed_with_open_mandatory_subtask: "high",
};

/** `detectedBy`: the component whose check saw the disagreement (the reconciler, or the writer of the outcome that revealed it). */
export async function raiseDivergence(
  tx: Tx,
  input: { taskId: string; executionId?: string; kind: DivergenceKind; message: string; internal: unknown; external: unknown },
  detectedBy: Actor,
): Promise<DivergenceAlert> {
  // One open alert per task, execution and kind: the reconciler may see the same disagreement every pass.
  const open = await tx.divergenceAlert.findFirst({
    where: { taskId: input.taskId, executionId: input.executionId ?? null, kind: input.kind, status: "OPEN" },
  });
  if (open) return open;
  const alert = await tx.divergenceAlert.create({
    data: {
      id: newId("alert"),
      taskId: input.taskId,
      executionId: input.executionId ?? null,
      kind: input.kind,
      severity: severityOf[input.kind],
      message: input.message,
      internal: input.internal as Prisma.InputJsonValue,
      external: input.external as Prisma.InputJsonValue,
      status: "OPEN",
      version: 1,
    },
  });
  await appendAuditEntry(tx, divergenceAuditEntry(alert, detectedBy));
  return alert;
}

/**
 * An irreversible effect that succeeded on a task which had already ended
 * without success (cancelled, failed): recorded, never hidden. The one rule
 * for the worker's outcome (executions.ts) and the system's settlement
 * (settle-task.ts).
 */
export async function raiseIfEffectAfterTaskEnded(
  tx: Tx,
  execution: Execution,
  task: { status: string; ended: boolean },
  detectedBy: Actor,
): Promise<void> {
  if (!task.ended || !execution.irreversible || !succeededStatuses.includes(execution.status)) return;
  await raiseDivergence(
    tx,
    {
    taskId: execution.taskId,
    executionId: execution.id,
    kind: "effect_after_task_ended",
    message: `${execution.tool} succeeded at the provider, but the task is already ${task.status}.`,
    internal: { task_status: task.status, execution_status: execution.status },
    external: { evidence: execution.evidence },
    },
    detectedBy,
  );
}

export async function hasOpenDivergence(db: Db | Tx, taskId: string): Promise<boolean> {
  return (await db.divergenceAlert.count({ where: { taskId, status: "OPEN" } })) > 0;
}

export async function listDivergences(db: Db, filter: { taskId?: string; status?: "OPEN" | "RESOLVED" } = {}): Promise<DivergenceAlert[]> {
  return db.divergenceAlert.findMany({
    where: { ...(filter.taskId ? { taskId: filter.taskId } : {}), ...(filter.status ? { status: filter.status } : {}) },
    orderBy: { createdAt: "desc" },
    take: 200,
  });
}

/** A person resolves an alert (with a reason), under CAS on the alert's version. */
export async function resolveDivergence(db: Db, alertId: string, input: { expectedVersion: number; resolution: string }, actor: Actor): Promise<DivergenceAlert> {
  if (!input.resolution.trim()) {
    throw new AppError("validation_failed", "resolution: a reason is required", { errors: [{ field: "resolution", message: "a reason is required" }] });
  }
  // The CAS and its audit entry commit together; a lost CAS records nothing.
  return db.$transaction(async (tx) => {
    const { count } = await tx.divergenceAlert.updateMany({
      where: { id: alertId, version: input.expectedVersion, status: "OPEN" },
      data: { status: "RESOLVED", version: input.expectedVersion + 1, resolvedAt: new Date(), resolvedBy: actor.identity, resolution: input.resolution },
    });
    const alert = await tx.divergenceAlert.findUnique({ where: { id: alertId } });
    if (!alert) throw new AppError("not_found", `Alert ${alertId} does not exist.`);
    if (count === 0) {
      throw new AppError("version_conflict", `Alert ${alertId} changed meanwhile (now version ${alert.version}, ${alert.status}).`, { currentVersion: alert.version });
    }
    await appendAuditEntry(tx, divergenceAuditEntry(alert, actor));
    return alert;
  });
}
