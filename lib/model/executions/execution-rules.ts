import type { ExecutionStatus } from "@/lib/generated/prisma/enums";
import { maxAttemptsOf } from "@/lib/model/executions/tools";

export type { ExecutionStatus };

/**
 * The execution status machine, as data. An outcome that is not known is
 * never turned into success or failure without evidence: OUTCOME_UNKNOWN
 * leaves only through reconciliation (or a person), and a known failure is
 * the only way back to a new attempt.
 */
export const executionMoves: Record<ExecutionStatus, readonly ExecutionStatus[]> = {
  // NEEDS_HUMAN: frozen before it was ever sent, because the instruction it
  // relies on is no longer current (lib/stores/instructions.ts).
  INTENT_RECORDED: ["SENT", "FAILED", "CANCELLED", "NEEDS_HUMAN"],
  // A SENT whose worker died is reconciled directly, like an unknown outcome.
  SENT: ["SUCCEEDED", "FAILED", "OUTCOME_UNKNOWN", "RECONCILED_SUCCEEDED", "RECONCILED_FAILED", "NEEDS_HUMAN"],
  SUCCEEDED: [],
  // RECONCILED_SUCCEEDED: the provider's record of the effect outweighs a
  // recorded failure (a failure says only that one request applied nothing;
  // another under the same key may have). Never SUCCEEDED: the history keeps
  // that this was a correction (lib/use-cases/reconciliation/success-after-failure.ts).
  // NEEDS_HUMAN: a failure that would be safe to retry, past its tool's
  // attempt limit, goes to a review instead of another automatic attempt.
  FAILED: ["INTENT_RECORDED", "CANCELLED", "RECONCILED_SUCCEEDED", "NEEDS_HUMAN"],
  OUTCOME_UNKNOWN: ["RECONCILED_SUCCEEDED", "RECONCILED_FAILED", "NEEDS_HUMAN"],
  RECONCILED_SUCCEEDED: [],
  RECONCILED_FAILED: ["INTENT_RECORDED", "CANCELLED", "RECONCILED_SUCCEEDED", "NEEDS_HUMAN"],
  // A person may accept the provider's evidence, approve a re-execution with
  // the same key (a new attempt goes straight out), or reject it.
  // INTENT_RECORDED: a registered tool's approved re-execution, which Verity
  // holds no credentials to send: a new attempt under the same key, released
  // to the agent holding the task (lib/use-cases/reviews/decide-review.ts).
  NEEDS_HUMAN: ["RECONCILED_SUCCEEDED", "SENT", "CANCELLED", "NEEDS_HUMAN", "INTENT_RECORDED"],
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
export function evidenceMatchesExecution(
  evidence: unknown,
  execution: { id: string; idempotencyKey: string },
): boolean {
  if (!evidence || typeof evidence !== "object") return false;
  const e = evidence as Record<string, unknown>;
  const metadata = (e.metadata && typeof e.metadata === "object" ? e.metadata : {}) as Record<string, unknown>;
  const keys = [e.idempotency_key, e.idempotencyKey];
  const ids = [e.execution_id, e.executionId, metadata.execution_id, metadata.executionId];
  return keys.includes(execution.idempotencyKey) || ids.includes(execution.id);
}

/**
 * Why a settled failure may, or may not, be tried again now:
 *
 *   never_sent         the attempt never left (the reconciler's "never sent")
 *   never_applied      the provider has nothing under the key (the reconciler's lookup)
 *   retryable_failure  the provider said this request applied nothing and a retry may work (a 503 not_processed)
 *   refused            the provider refused the request itself: the same request would be refused again
 *   not_stated         nobody recorded whether a retry would work
 *   attempt_limit      a retry would be safe, but the tool's attempts are used up
 *
 * Only the first three are safe, and only below the tool's attempt limit;
 * every attempt is under the call's one idempotency key, so a retry can
 * never make the effect twice. What is not safe goes to a person (or, for
 * `refused`, is the provider's final word): never dropped.
 */
export const retryCodes = [
  "never_sent",
  "never_applied",
  "retryable_failure",
  "refused",
  "not_stated",
  "attempt_limit",
] as const;
export type RetryCode = (typeof retryCodes)[number];

export interface RetryAdvice {
  /** A new attempt under the same idempotency key may be made now. */
  safe: boolean;
  code: RetryCode;
  /** In words, for the agent's log and the person who picks it up. */
  reason: string;
  /** The attempt that failed. */
  attempt: number;
  maxAttempts: number;
}

/**
 * What a settlement that established nothing was applied stores as the
 * execution's `result`, so that every reader of the row (retryAdviceOf, an
 * agent on an older SDK reading `retryable`) can tell a retry is safe.
 */
export function notAppliedResult(
  reason: "never_sent" | "never_applied",
  detail: string,
): { reason: typeof reason; retryable: true; retry_safe: true; detail: string } {
  return { reason, retryable: true, retry_safe: true, detail };
}

/** The retry advice for an execution settled as failed (FAILED, RECONCILED_FAILED); null for every other status. */
export function retryAdviceOf(e: {
  /** Whose registry the tool version is read from. */
  tenantId: string;
  status: ExecutionStatus;
  attempt: number;
  tool: string;
  /** The tool version the call was recorded under (executions.tool_version); null before the registry. */
  toolVersion?: number | null;
  result: unknown;
  error: string | null;
}): RetryAdvice | null {
  if (!retryableStatuses.includes(e.status)) return null;
  const maxAttempts = maxAttemptsOf(e.tenantId, e.tool, e.toolVersion);
  const stated = statedRetry(e.result, e.error);
  const advice = (safe: boolean, code: RetryCode, reason: string): RetryAdvice => ({
    safe,
    code,
    reason,
    attempt: e.attempt,
    maxAttempts,
  });
  if (stated.safe && e.attempt >= maxAttempts) {
    return advice(
      false,
      "attempt_limit",
      `${stated.reason}; but attempt ${e.attempt} was the last of ${maxAttempts} for ${e.tool}: a person decides whether to try again`,
    );
  }
  return advice(stated.safe, stated.code, stated.reason);
}

function statedRetry(
  result: unknown,
  error: string | null,
): { safe: boolean; code: Exclude<RetryCode, "attempt_limit">; reason: string } {
  const r = (result && typeof result === "object" && !Array.isArray(result) ? result : {}) as Record<string, unknown>;
  const said = typeof r.reason === "string" ? ` (${r.reason})` : "";
  if (r.retry_safe === true && r.reason === "never_sent")
    return { safe: true, code: "never_sent", reason: "the attempt was never sent: retry it under the same key" };
  if (r.retry_safe === true && r.reason === "never_applied")
    return {
      safe: true,
      code: "never_applied",
      reason: "the provider has nothing under the key, so it was never applied: retry it under the same key",
    };
  if (r.retryable === true)
    return {
      safe: true,
      code: "retryable_failure",
      reason: `the provider said this request applied nothing${said} and a retry may work: retry it under the same key`,
    };
  if (r.retryable === false)
    return {
      safe: false,
      code: "refused",
      reason: `the provider refused the request${said}${error ? `: ${error}` : ""}; the same request would be refused again`,
    };
  return {
    safe: false,
    code: "not_stated",
    reason: `nobody recorded whether a retry would work${error ? ` (${error})` : ""}`,
  };
}
