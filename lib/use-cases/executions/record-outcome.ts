import { inSpan } from "@/lib/config/tracing";
import { z } from "zod";
import { inOrder, transactionOn, type Db } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { Prisma, type Execution } from "@/lib/generated/prisma/client";
import {
  evidenceMatchesExecution,
  retryableStatuses,
  type ExecutionStatus,
} from "@/lib/model/executions/execution-rules";
import {
  getExecutionRowOrThrow,
  illegalMove,
  isPastAttemptLimit,
  ledgerActor,
  startExecutionMove,
  staleAttempt,
  toExecutionView,
  type ExecutionView,
} from "@/lib/stores/execution-store";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { handFailureToPeople } from "@/lib/use-cases/reviews/hand-failure-to-people";
import { type CorrectionMove } from "@/lib/use-cases/executions/settle-task";
import { getConnectors, type ConnectorDeps, type ProviderRecord } from "@/lib/connectors/effects";
import {
  confirmReportedSuccess,
  settleSuccessAfterFailure,
} from "@/lib/use-cases/reconciliation/success-after-failure";
import { fencingTokenSchema, jsonObjectSchema } from "@/lib/use-cases/executions/input-fields";
import { leaseConflictOf, type LeaseConflict } from "@/lib/use-cases/executions/lease-fencing";
import { moveTaskAfterTool } from "@/lib/use-cases/executions/move-task-after-tool";
import { confirmAtProvider } from "@/lib/use-cases/reconciliation/confirm-at-provider";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";

export const RecordOutcomeInputSchema = z.strictObject({
  attempt_id: clientIdSchema,
  outcome: z.enum(["succeeded", "failed", "unknown"]),
  result: jsonObjectSchema.optional(),
  /** What the provider said; for success it must name this execution (id or idempotency key). */
  evidence: jsonObjectSchema.optional(),
  error: z.string().max(2000).optional(),
  /** Where the task goes after a success: more work (RUNNING, default) or VALIDATING. */
  next_status: z.enum(["RUNNING", "VALIDATING"]).optional(),
  fencing_token: fencingTokenSchema.optional(),
});

export interface OutcomeResult {
  execution: ExecutionView;
  /** The task after the move this report made; null when it made none (a repeated report, a task that had moved on, a lease conflict). */
  task: TaskView | null;
  /**
   * Set when the outcome is recorded but the task was not moved: the caller's
   * fencing token is not the task's current lease (it expired and another
   * worker took the task over). Null otherwise.
   */
  leaseConflict: LeaseConflict | null;
}

export interface RecordOutcomeOptions {
  /**
   * For the engine's own callers that asked the provider already and judged
   * its record themselves (the regional failover, whose record names the
   * lost primary's execution under the same key: lib/use-cases/failover/):
   * that lookup, in place of asking again. Never taken from a request.
   */
  confirmedByCaller?: ConfirmedByCaller;
  /**
   * The attempt's row as the caller's own intent wrote it a moment ago
   * (performToolCall, through executionRowWrittenFor), in place of reading
   * it back. Never taken from a request. An attempt that anything moved
   * since (the provider's webhook, the reconciler) is refused by the move's
   * CAS on its version, exactly as when the row read before the move is
   * overtaken.
   */
  written?: Execution;
}

export interface ConfirmedByCaller {
  record: ProviderRecord;
  provider: unknown;
  /** Why the caller holds the record to be this execution's effect. */
  why: string;
}

/** recordOutcome as a span of the request's trace (lib/config/tracing.ts). */
export function recordOutcome(
  db: Db,
  executionId: string,
  raw: unknown,
  actor: Actor,
  deps?: ConnectorDeps,
  options: RecordOutcomeOptions = {},
): Promise<OutcomeResult> {
  return inSpan("use-case recordOutcome", { "verity.execution_id": executionId }, () =>
    recordOutcomeUntraced(db, executionId, raw, actor, deps, options),
  );
}

/**
 * The provider's answer is a fact about the external world, not the
 * worker's opinion of the task: it is recorded even when the worker's lease
 * was taken over meanwhile, under the same evidence rules. Only the task's
 * move is fenced; with a stale token it is skipped and the answer says so
 * (leaseConflict), and the new lease holder finds the receipt (recordIntent
 * answers `receipt`) instead of waiting for the reconciler's SENT timeout.
 */
async function recordOutcomeUntraced(
  db: Db,
  executionId: string,
  raw: unknown,
  actor: Actor,
  deps?: ConnectorDeps,
  options: RecordOutcomeOptions = {},
): Promise<OutcomeResult> {
  const input = parseOrThrow(RecordOutcomeInputSchema, raw);
  const existing =
    options.written?.id === executionId ? options.written : await getExecutionRowOrThrow(db, executionId);
  if (existing.attemptId !== input.attempt_id) throw staleAttempt(existing, input.attempt_id);
  // The recorded version's attempt limit and identity fields decide below.
  await toolOfExecutionOrThrow(db, existing);
  const target: ExecutionStatus =
    input.outcome === "succeeded" ? "SUCCEEDED" : input.outcome === "failed" ? "FAILED" : "OUTCOME_UNKNOWN";
  // A retried report of the same outcome is answered, not applied twice; the
  // lease is judged again so that the retry of a fenced-out report (its first
  // answer lost) says the same thing.
  if (existing.status === target) {
    return {
      execution: toExecutionView(existing),
      task: null,
      leaseConflict: await leaseConflictOf(db, existing.taskId, input.fencing_token, actor),
    };
  }
  // The provider's record of the effect outweighs a recorded failure: not a 422 dead end (lib/use-cases/reconciliation/success-after-failure.ts).
  if (target === "SUCCEEDED" && retryableStatuses.includes(existing.status))
    return recordSuccessAfterFailure(db, existing, input, actor, deps ?? getConnectors());
  if (existing.status !== "SENT") throw illegalMove(existing, target);
  if (target === "SUCCEEDED" && !evidenceMatchesExecution(input.evidence ?? input.result, existing)) {
    throw new AppError(
      "invariant_violated",
      "Success needs evidence that names this execution (its id or idempotency key); without it the outcome is unknown.",
      {
        violations: [
          {
            invariant: "success_requires_matching_evidence",
            message: `No evidence names execution ${existing.id} or key ${existing.idempotencyKey}.`,
          },
        ],
      },
    );
  }
  const settled =
    target === "SUCCEEDED"
      ? await successAsConfirmed(db, existing, input, actor, deps, options.confirmedByCaller)
      : null;
  const status = settled?.status ?? target;
  const evidence = settled ? settled.evidence : input.evidence;
  return transactionOn(db, async (tx) => {
    const move = await startExecutionMove(tx, existing, status, actor, {
      reason:
        settled?.reason ??
        (input.outcome === "unknown" ? `outcome unknown: ${input.error ?? "no answer"}` : input.outcome),
      evidence,
      data: {
        result: (input.result ?? Prisma.JsonNull) as Prisma.InputJsonValue,
        evidence: (evidence ?? Prisma.JsonNull) as Prisma.InputJsonValue,
        error: input.error ?? null,
        settledAt: status === "OUTCOME_UNKNOWN" ? null : new Date(),
      },
    });
    if (status === "FAILED" && isPastAttemptLimit(move.expected)) {
      const row = await move.done;
      const handed = await handFailureToPeople(tx, row);
      return {
        execution: toExecutionView(handed.execution),
        task: handed.task,
        leaseConflict: await leaseConflictOf(tx, row.taskId, input.fencing_token, actor),
      };
    }
    const next =
      status === "SUCCEEDED" ? (input.next_status ?? "RUNNING") : status === "FAILED" ? "RUNNING" : "RECONCILING";
    // The task's move is asked for while the execution's is on its way: its
    // statements follow the execution's on this connection (the same lock
    // order as before: the execution's row, then the task's) and share its
    // round trip. An execution that moved meanwhile refuses the whole step.
    const taskMove = moveTaskAfterTool(
      tx,
      move.expected,
      next,
      actor,
      `${existing.tool} ${input.outcome}`,
      input.fencing_token,
      db,
    ).then(
      (task) => ({ task, refused: null }),
      (refused: unknown) => ({ task: null, refused }),
    );
    const [row, { task, refused }] = await inOrder([move.done, taskMove] as const);
    if (refused === null) return { execution: toExecutionView(row), task, leaseConflict: null };
    // The fenced CAS matched no row and raised no SQL error, so this
    // transaction is intact: the outcome commits without the task move.
    if (!(isAppError(refused) && refused.code === "lease_conflict")) throw refused;
    const leaseConflict = await leaseConflictOf(tx, row.taskId, input.fencing_token, actor);
    return {
      execution: toExecutionView(row),
      task: null,
      leaseConflict: leaseConflict ?? { message: refused.message, lease: null },
    };
  });
}

/**
 * How a success report for a SENT attempt is recorded. An irreversible
 * effect's success stands only on the provider's record
 * (confirm-at-provider.ts): a matching record is added to the evidence and
 * the attempt is SUCCEEDED; no record, or a different one, refuses the report
 * (422) and changes nothing; a provider that cannot be asked now records the
 * attempt OUTCOME_UNKNOWN, and the task waits in RECONCILING for the
 * reconciler's lookup, which settles it either way. A reversible effect's
 * report stands on its evidence, as before; the reconciler checks those after
 * the fact (effect_missing_at_provider).
 */
async function successAsConfirmed(
  db: Db,
  existing: Execution,
  input: z.infer<typeof RecordOutcomeInputSchema>,
  actor: Actor,
  deps: ConnectorDeps | undefined,
  byCaller: ConfirmedByCaller | undefined,
): Promise<{ status: ExecutionStatus; evidence: Record<string, unknown> | undefined; reason: string }> {
  if (!existing.irreversible) return { status: "SUCCEEDED", evidence: input.evidence, reason: "succeeded" };
  if (byCaller)
    return {
      status: "SUCCEEDED",
      evidence: {
        ...(input.evidence ?? {}),
        confirmed_at_provider: { record: byCaller.record, provider: byCaller.provider, why: byCaller.why },
      },
      reason: `succeeded, confirmed by the provider's record ${byCaller.record.id} (${byCaller.why})`,
    };
  const found = await confirmAtProvider(
    db,
    existing,
    { result: input.result, evidence: input.evidence },
    actor,
    deps ?? getConnectors(),
  );
  const confirmation = { record: found.record, provider: found.provider };
  const evidence = { ...(input.evidence ?? {}), confirmed_at_provider: confirmation };
  if (found.record)
    return {
      status: "SUCCEEDED",
      evidence,
      reason: `succeeded, confirmed by the provider's record ${found.record.id}`,
    };
  const provider = found.provider as { reason?: string; message?: string };
  return {
    status: "OUTCOME_UNKNOWN",
    evidence,
    reason: `success reported, but the provider could not be asked to confirm it (${provider.reason ?? "unknown"}: ${provider.message ?? "no answer"}); the reconciler's lookup settles it`,
  };
}

export interface CorrectedOutcome extends OutcomeResult {
  /** Where the correction left the task, in words (lib/use-cases/executions/settle-task.ts CorrectionMove). */
  correction: CorrectionMove;
}

/**
 * A success reported for an execution already settled FAILED or
 * RECONCILED_FAILED: checked against the provider (confirmReportedSuccess),
 * then corrected to RECONCILED_SUCCEEDED with both records as evidence,
 * the task moved on by the ledger and the contradiction's alert resolved.
 * A report naming an older attempt was refused before this (staleAttempt).
 */
async function recordSuccessAfterFailure(
  db: Db,
  existing: Execution,
  input: z.infer<typeof RecordOutcomeInputSchema>,
  actor: Actor,
  deps: ConnectorDeps,
): Promise<CorrectedOutcome> {
  // The provider is asked outside any transaction; the CAS below is against the version read before it.
  const found = await confirmReportedSuccess(
    db,
    existing,
    { result: input.result, evidence: input.evidence },
    actor,
    deps,
  );
  return db.$transaction(async (tx) => {
    const corrected = await settleSuccessAfterFailure(
      tx,
      existing,
      found,
      { actor, taskActor: ledgerActor },
      { why: `success reported by ${actor.identity} after the attempt was recorded ${existing.status}` },
    );
    // The task was the ledger's to move; a worker whose lease was taken over is still told to stop.
    const leaseConflict = await leaseConflictOf(tx, existing.taskId, input.fencing_token, actor);
    return {
      execution: toExecutionView(corrected.execution),
      task: corrected.task.task,
      leaseConflict,
      correction: corrected.task,
    };
  });
}
