import type { ExecutionStatus } from "@/lib/generated/prisma/enums";

export type { ExecutionStatus };

/**
 * The execution status machine, as data. An outcome that is not known is
 * never turned into success or failure without evidence: OUTCOME_UNKNOWN
 * leaves only through reconciliation (or a person), and a known failure is
 * the only way back to a new attempt.
 */
export const executionMoves: Record<ExecutionStatus, readonly ExecutionStatus[]> = {
  // NEEDS_HUMAN: frozen before it was ever sent, because the instruction it
  // relies on is no longer current (lib/engine/instructions.ts).
  INTENT_RECORDED: ["SENT", "FAILED", "CANCELLED", "NEEDS_HUMAN"],
  // A SENT whose worker died is reconciled directly, like an unknown outcome.
  SENT: ["SUCCEEDED", "FAILED", "OUTCOME_UNKNOWN", "RECONCILED_SUCCEEDED", "RECONCILED_FAILED", "NEEDS_HUMAN"],
  SUCCEEDED: [],
  FAILED: ["INTENT_RECORDED", "CANCELLED"],
  OUTCOME_UNKNOWN: ["RECONCILED_SUCCEEDED", "RECONCILED_FAILED", "NEEDS_HUMAN"],
  RECONCILED_SUCCEEDED: [],
  RECONCILED_FAILED: ["INTENT_RECORDED", "CANCELLED"],
  // A person may accept the provider's evidence, approve a re-execution with
  // the same key (a new attempt goes straight out), or reject it.
  NEEDS_HUMAN: ["RECONCILED_SUCCEEDED", "SENT", "CANCELLED", "NEEDS_HUMAN"],
  CANCELLED: [],
};

export const succeededStatuses: readonly ExecutionStatus[] = ["SUCCEEDED", "RECONCILED_SUCCEEDED"];
/** The effect may have happened and nobody knows yet: irreversible retries wait. */
export const unresolvedStatuses: readonly ExecutionStatus[] = ["SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"];
export const retryableStatuses: readonly ExecutionStatus[] = ["FAILED", "RECONCILED_FAILED"];

export function canMoveExecution(from: ExecutionStatus, to: ExecutionStatus): boolean {
  return executionMoves[from].includes(to);
}

/**
 * Audit Invariant 4: success needs evidence that names this execution — the
 * provider's record carrying our execution id, or our idempotency key.
 */
export function evidenceMatchesExecution(evidence: unknown, execution: { id: string; idempotencyKey: string }): boolean {
  if (!evidence || typeof evidence !== "object") return false;
  const e = evidence as Record<string, unknown>;
  const metadata = (e.metadata && typeof e.metadata === "object" ? e.metadata : {}) as Record<string, unknown>;
  const keys = [e.idempotency_key, e.idempotencyKey];
  const ids = [e.execution_id, e.executionId, metadata.execution_id, metadata.executionId];
  return keys.includes(execution.idempotencyKey) || ids.includes(execution.id);
}
