import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { Db, Tx } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { Prisma, type Execution } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { hasOpenDivergence, raiseIfEffectAfterTaskEnded } from "@/lib/use-cases/alerts/divergence";
import {
  evidenceMatchesExecution,
  retryableStatuses,
  succeededStatuses,
  unresolvedStatuses,
  type ExecutionStatus,
} from "@/lib/model/executions/execution-rules";
import { getLease, leaseRefusal, type LeaseView } from "@/lib/stores/leases";
import {
  appendEvent,
  getExecutionRowOrThrow,
  guardOf,
  idempotencyKeyOf,
  illegalMove,
  isPastAttemptLimit,
  ledgerActor,
  moveExecution,
  staleAttempt,
  toExecutionView,
  type ExecutionView,
  type InstructionGuardView,
} from "@/lib/stores/execution-store";

// The ledger's reads and its one write path, for the routes and tests that import them from here.
export {
  getExecution,
  getExecutionRowOrThrow,
  guardOf,
  idempotencyKeyOf,
  isPastAttemptLimit,
  ledgerActor,
  listExecutionEvents,
  listExecutions,
  moveExecution,
  toExecutionView,
  type ExecutionView,
  type InstructionGuardView,
} from "@/lib/stores/execution-store";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { takeCheckpointInTransaction } from "@/lib/stores/checkpoint-store";
import { ToolNameSchema, tools, type ToolName } from "@/lib/model/executions/tools";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { checkInstructionGuard, type InstructionBlock } from "@/lib/stores/instructions";
import { handFailureToPeople } from "@/lib/use-cases/reviews/hand-failure-to-people";
import { openReview } from "@/lib/stores/review-store";
import { moveTaskAfterSettlement, type CorrectionMove } from "@/lib/use-cases/executions/settle-task";
import { getConnectors, type ConnectorDeps } from "@/lib/connectors/effects";
import { confirmReportedSuccess, settleSuccessAfterFailure } from "@/lib/use-cases/reconciliation/success-after-failure";

/**
 * The owner of `executions` and `execution_events`: the write-ahead ledger of
 * external side effects.
 *
 *   recordIntent   commits the intent (with the task's move to
 *                  WAITING_FOR_TOOL, one transaction) before anything leaves
 *   markSent       the request is about to leave: from here the outcome is
 *                  uncertain until recorded
 *   recordOutcome  succeeded (with evidence naming this execution), failed
 *                  (the provider said nothing happened) or unknown
 *
 * A crash between any two steps leaves a record that recovery can read: an
 * INTENT_RECORDED was never sent; a SENT may or may not have happened and is
 * reconciled (lib/use-cases/reconciliation/reconciler.ts) before any irreversible retry.
 */

const clientId = clientIdSchema;
const fencingToken = z.string().regex(/^[0-9]{1,18}$/, "must be the decimal fencing token of your lease");
const jsonObject = z.record(z.string(), z.unknown());

export const RecordIntentInputSchema = z.strictObject({
  /** The logical call within the task; stable across retries and crashes. */
  tool_call_id: clientId,
  tool: ToolNameSchema,
  request: jsonObject,
  /** The task's version: the intent and the task's move to WAITING_FOR_TOOL commit together under CAS. */
  expected_version: z.number().int().min(1),
  fencing_token: fencingToken.optional(),
  /**
   * The task instruction this call relies on (lib/stores/instructions.ts).
   * An irreversible call whose instruction is no longer the current
   * authorized one on the tool's topic is frozen for review, not sent.
   */
  instruction_id: clientId.optional(),
});

export const MarkSentInputSchema = z.strictObject({
  attempt_id: clientId,
  /** The sender's lease; without it, the lease the attempt was recorded under is assumed. */
  fencing_token: fencingToken.optional(),
});

export const RecordOutcomeInputSchema = z.strictObject({
  attempt_id: clientId,
  outcome: z.enum(["succeeded", "failed", "unknown"]),
  result: jsonObject.optional(),
  /** What the provider said; for success it must name this execution (id or idempotency key). */
  evidence: jsonObject.optional(),
  error: z.string().max(2000).optional(),
  /** Where the task goes after a success: more work (RUNNING, default) or VALIDATING. */
  next_status: z.enum(["RUNNING", "VALIDATING"]).optional(),
  fencing_token: fencingToken.optional(),
});



export type IntentResult =
  /** A receipt exists: skip the call, use the recorded result. */
  | { kind: "receipt"; execution: ExecutionView }
  /** Send the request now, with this idempotency key and attempt id. */
  | { kind: "proceed"; execution: ExecutionView; task: TaskView | null }
  /**
   * Not sent, and never will be unless a person approves: the instruction
   * it relies on is superseded or unauthorized, or the current one forbids
   * it. The execution is NEEDS_HUMAN, the task WAITING_FOR_HUMAN, the review
   * open. `message` says why in words; `task` is null on a replay.
   */
  | { kind: "blocked"; execution: ExecutionView; task: TaskView | null; reviewId: string; message: string; guard: InstructionGuardView | null };



export async function recordIntent(db: Db, taskId: string, raw: unknown, actor: Actor): Promise<IntentResult> {
  const input = parseOrThrow(RecordIntentInputSchema, raw);
  const tool = tools[input.tool];
  const request = parseRequest(tool.request, input.request);
  const requestDigest = digestOf({ tool: input.tool, request });
  const existing = await db.execution.findUnique({ where: { taskId_toolCallId: { taskId, toolCallId: input.tool_call_id } } });
  if (existing) return continueExisting(db, existing, input, requestDigest, actor);
  if (tool.irreversible) await refuseWhileDiverged(db, taskId);
  const now = new Date();
  try {
    return await db.$transaction(async (tx): Promise<IntentResult> => {
      const block = tool.irreversible ? await checkInstructionGuard(tx, taskId, input.tool, input.instruction_id ?? null) : null;
      const { task } = await transitionTaskInTransaction(
        tx,
        taskId,
        block
          ? { expected_version: input.expected_version, to: "WAITING_FOR_HUMAN", fencing_token: input.fencing_token, reason: block.message.slice(0, 1000) }
          : { expected_version: input.expected_version, to: "WAITING_FOR_TOOL", fencing_token: input.fencing_token, reason: `calling ${input.tool} (${input.tool_call_id})` },
        actor,
      );
      const id = newId("exec");
      const row = await tx.execution.create({
        data: {
          id,
          taskId,
          toolCallId: input.tool_call_id,
          attempt: 1,
          attemptId: `${id}.1`,
          idempotencyKey: idempotencyKeyOf(taskId, input.tool_call_id),
          tool: input.tool,
          irreversible: tool.irreversible,
          request: request as Prisma.InputJsonValue,
          requestDigest,
          status: "INTENT_RECORDED",
          version: 1,
          createdBy: actor.identity,
          createdAt: now,
          updatedAt: now,
          instructionId: input.instruction_id ?? null,
          leaseToken: input.fencing_token === undefined ? null : BigInt(input.fencing_token),
        },
      });
      await appendEvent(tx, row, null, "intent recorded", undefined, actor);
      if (block) {
        const frozen = await freezeBeforeSending(tx, row, block, actor);
        return { kind: "blocked", ...frozen, task };
      }
      // The spec's "before deploy / payment / delete" boundary: the checkpoint
      // commits with the intent, so a resume after a crash finds both or neither.
      if (tool.irreversible) await checkpointBeforeEffect(tx, task, actor);
      return { kind: "proceed" as const, execution: toExecutionView(row), task };
    });
  } catch (error) {
    // A twin request created the intent first: answer as a retry of it.
    if (isUniqueViolation(error)) {
      const twin = await db.execution.findUnique({ where: { taskId_toolCallId: { taskId, toolCallId: input.tool_call_id } } });
      if (twin) return continueExisting(db, twin, input, requestDigest, actor);
    }
    throw error;
  }
}

/** The checkpoint taken with an irreversible intent, of the task as the intent left it (WAITING_FOR_TOOL). */
async function checkpointBeforeEffect(tx: Tx, task: TaskView, actor: Actor): Promise<void> {
  await takeCheckpointInTransaction(tx, {
    task: { id: task.id, workflowDigest: task.workflow.digest, intentId: task.intentId, createdBy: task.createdBy },
    state: task.state,
    trigger: "before_irreversible_effect",
    actor,
    createdAt: task.updatedAt,
  });
}

async function continueExisting(
  db: Db,
  existing: Execution,
  input: z.infer<typeof RecordIntentInputSchema>,
  requestDigest: string,
  actor: Actor,
): Promise<IntentResult> {
  if (existing.requestDigest !== requestDigest || existing.tool !== input.tool) {
    throw new AppError("idempotency_conflict", `Tool call ${existing.toolCallId} was recorded with a different tool or request; use a new tool_call_id for a different call.`);
  }
  if (succeededStatuses.includes(existing.status)) return { kind: "receipt", execution: toExecutionView(existing) };
  // Frozen before it was ever sent: the same answer as the first time.
  if (existing.status === "NEEDS_HUMAN" && existing.sentAt === null) {
    const replay = await blockedReplay(db, existing);
    if (replay) return replay;
  }
  // Recorded but never sent (the worker died before sending): the current
  // lease holder sends this same attempt; a fenced worker is told to stop
  // now rather than at markSent.
  if (existing.status === "INTENT_RECORDED") {
    if (actor.kind === "agent") await refuseUnlessLeaseCurrent(db, existing.taskId, input.fencing_token, actor, `Attempt ${existing.attemptId} is not yours to send`);
    return { kind: "proceed", execution: toExecutionView(existing), task: null };
  }
  if (unresolvedStatuses.includes(existing.status)) {
    throw new AppError(
      "invariant_violated",
      `The previous attempt of ${existing.tool} (${existing.toolCallId}) is ${existing.status}: its outcome is not known, so it cannot be retried until it is reconciled with the provider.`,
      { violations: [{ invariant: "unknown_outcome_reconciled_before_retry", message: `Execution ${existing.id} is ${existing.status}.` }], executionId: existing.id },
    );
  }
  if (existing.status === "CANCELLED") {
    throw new AppError("invariant_violated", `Execution ${existing.id} was cancelled; it is never retried.`, {
      violations: [{ invariant: "cancelled_execution_final", message: `Execution ${existing.id} is CANCELLED.` }],
    });
  }
  if (!retryableStatuses.includes(existing.status)) throw new Error(`unhandled execution status ${existing.status}`);
  // A known failure: a new attempt with the same idempotency key is safe.
  if (existing.irreversible) await refuseWhileDiverged(db, existing.taskId);
  // A new attempt relies on what it names now (an agent that re-read the ledger), else on what the first one named.
  const instructionId = input.instruction_id ?? existing.instructionId;
  return db.$transaction(async (tx): Promise<IntentResult> => {
    const block = existing.irreversible ? await checkInstructionGuard(tx, existing.taskId, input.tool, instructionId) : null;
    const { task } = await transitionTaskInTransaction(
      tx,
      existing.taskId,
      block
        ? { expected_version: input.expected_version, to: "WAITING_FOR_HUMAN", fencing_token: input.fencing_token, reason: block.message.slice(0, 1000) }
        : { expected_version: input.expected_version, to: "WAITING_FOR_TOOL", fencing_token: input.fencing_token, reason: `retrying ${existing.tool} (${existing.toolCallId}) after a known failure` },
      actor,
    );
    const attempt = existing.attempt + 1;
    const row = await moveExecution(tx, existing, "INTENT_RECORDED", actor, {
      reason: `attempt ${attempt} after a known failure`,
      data: { attempt, attemptId: `${existing.id}.${attempt}`, error: null, sentAt: null, settledAt: null, instructionId, leaseToken: input.fencing_token === undefined ? null : BigInt(input.fencing_token) },
    });
    if (block) return { kind: "blocked", ...(await freezeBeforeSending(tx, row, block, actor)), task };
    if (existing.irreversible) await checkpointBeforeEffect(tx, task, actor);
    return { kind: "proceed" as const, execution: toExecutionView(row), task };
  });
}

export async function markSent(db: Db, executionId: string, raw: unknown, actor: Actor): Promise<ExecutionView> {
  const input = parseOrThrow(MarkSentInputSchema, raw);
  const existing = await getExecutionRowOrThrow(db, executionId);
  if (existing.attemptId !== input.attempt_id) throw staleAttempt(existing, input.attempt_id);
  const token = input.fencing_token ?? (existing.leaseToken === null ? undefined : String(existing.leaseToken));
  if (existing.status === "SENT") {
    // A retry of our own markSent is answered; another lease's is refused, or two processes would both send.
    if (actor.kind === "agent" && existing.leaseToken !== null && token !== String(existing.leaseToken)) {
      throw new AppError("lease_conflict", `Attempt ${existing.attemptId} was already sent under fencing token ${existing.leaseToken}, not yours (${token ?? "none"}): do not send it. Its outcome is reconciled with the provider.`, {
        violations: [{ invariant: "fencing_token_current", message: `sent under fencing token ${existing.leaseToken}` }],
      });
    }
    return toExecutionView(existing);
  }
  if (existing.status !== "INTENT_RECORDED") throw illegalMove(existing, "SENT");
  // The last moment before the request leaves: an instruction recorded since
  // the intent (a resumed worker, a slow one) still stops it here.
  type Sending = { blocked: Awaited<ReturnType<typeof freezeBeforeSending>>; row?: undefined } | { row: Execution; blocked?: undefined };
  const sent = await db.$transaction(async (tx): Promise<Sending> => {
    // Only the task's current lease may send an attempt: a worker fenced
    // since the intent (its lease expired and was taken over, or another
    // process of its identity holds it) stops here, before anything leaves.
    // FOR SHARE holds off a takeover until this commits; after that the new
    // holder finds the attempt SENT and reconciles it instead of sending.
    if (actor.kind === "agent") await refuseUnlessLeaseCurrent(tx, existing.taskId, token, actor, `Attempt ${existing.attemptId} was not sent`);
    if (existing.irreversible) {
      const block = await checkInstructionGuard(tx, existing.taskId, existing.tool as ToolName, existing.instructionId);
      if (block) {
        const frozen = await freezeBeforeSending(tx, existing, block, actor);
        await moveTaskAfterSettlement(tx, await getExecutionRowOrThrow(tx, existing.id), "WAITING_FOR_HUMAN", actor, block.message);
        return { blocked: frozen };
      }
    }
    const leaseToken = token === undefined ? null : BigInt(token);
    return { row: await moveExecution(tx, existing, "SENT", actor, { reason: "request leaving", data: { sentAt: new Date(), leaseToken } }) };
  });
  if (sent.blocked) {
    // Committed (frozen, reviewed); the request must not leave, so the answer is an error the SDK reads as `blocked`.
    throw new AppError("invariant_violated", sent.blocked.message, {
      violations: [{ invariant: "instruction_current_before_send", message: sent.blocked.message }],
      executionId: existing.id,
      reviewId: sent.blocked.reviewId,
    });
  }
  return toExecutionView(sent.row!);
}

/**
 * Freezes an intent that was never sent: NEEDS_HUMAN (its `error` says why)
 * and a review naming both instructions, in the caller's transaction. The
 * caller moves the task to WAITING_FOR_HUMAN through the task CAS, the way
 * the reconciler's frozen refunds get there.
 */
async function freezeBeforeSending(
  tx: Tx,
  row: Execution,
  block: InstructionBlock,
  actor: Actor,
): Promise<{ execution: ExecutionView; reviewId: string; message: string; guard: InstructionGuardView }> {
  const guard: InstructionGuardView = { kind: block.kind, topic: block.topic, reliedOn: block.reliedOn, current: block.current };
  const frozen = await moveExecution(tx, row, "NEEDS_HUMAN", actor, {
    reason: block.message.slice(0, 2000),
    evidence: { instruction_guard: { kind: block.kind, topic: block.topic, relied_on_id: block.reliedOn?.id ?? null, current_id: block.current?.id ?? null } },
    data: { error: block.message.slice(0, 2000) },
  });
  const review = await openReview(tx, frozen, block.message, actor);
  return { execution: toExecutionView(frozen), reviewId: review.id, message: block.message, guard };
}

/** The answer to a retry of an intent the guard froze: the same words, the same review. */
async function blockedReplay(db: Db, existing: Execution): Promise<IntentResult | null> {
  const review = await db.review.findUnique({ where: { executionId: existing.id }, select: { id: true } });
  if (!review) return null;
  const guard = await guardOf(db, existing.id);
  return { kind: "blocked", execution: toExecutionView(existing), task: null, reviewId: review.id, message: existing.error ?? "frozen for review", guard };
}

/** The instructions the guard named when it froze `executionId`, from the freezing event; null if it was not frozen by the guard. */

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

export interface LeaseConflict {
  message: string;
  /** The task's lease as it is now: the holder that took over, or an expired one; null if the task has none. */
  lease: LeaseView | null;
}

/**
 * The provider's answer is a fact about the external world, not the
 * worker's opinion of the task: it is recorded even when the worker's lease
 * was taken over meanwhile, under the same evidence rules. Only the task's
 * move is fenced; with a stale token it is skipped and the answer says so
 * (leaseConflict), and the new lease holder finds the receipt (recordIntent
 * answers `receipt`) instead of waiting for the reconciler's SENT timeout.
 */
export async function recordOutcome(db: Db, executionId: string, raw: unknown, actor: Actor, deps?: ConnectorDeps): Promise<OutcomeResult> {
  const input = parseOrThrow(RecordOutcomeInputSchema, raw);
  const existing = await getExecutionRowOrThrow(db, executionId);
  if (existing.attemptId !== input.attempt_id) throw staleAttempt(existing, input.attempt_id);
  const target: ExecutionStatus = input.outcome === "succeeded" ? "SUCCEEDED" : input.outcome === "failed" ? "FAILED" : "OUTCOME_UNKNOWN";
  // A retried report of the same outcome is answered, not applied twice; the
  // lease is judged again so that the retry of a fenced-out report (its first
  // answer lost) says the same thing.
  if (existing.status === target) {
    return { execution: toExecutionView(existing), task: null, leaseConflict: await leaseConflictOf(db, existing.taskId, input.fencing_token, actor) };
  }
  // The provider's record of the effect outweighs a recorded failure: not a 422 dead end (lib/use-cases/reconciliation/success-after-failure.ts).
  if (target === "SUCCEEDED" && retryableStatuses.includes(existing.status)) return recordSuccessAfterFailure(db, existing, input, actor, deps ?? getConnectors());
  if (existing.status !== "SENT") throw illegalMove(existing, target);
  if (target === "SUCCEEDED" && !evidenceMatchesExecution(input.evidence ?? input.result, existing)) {
    throw new AppError("invariant_violated", "Success needs evidence that names this execution (its id or idempotency key); without it the outcome is unknown.", {
      violations: [{ invariant: "success_requires_matching_evidence", message: `No evidence names execution ${existing.id} or key ${existing.idempotencyKey}.` }],
    });
  }
  return db.$transaction(async (tx) => {
    const row = await moveExecution(tx, existing, target, actor, {
      reason: input.outcome === "unknown" ? `outcome unknown: ${input.error ?? "no answer"}` : input.outcome,
      evidence: input.evidence,
      data: {
        result: (input.result ?? Prisma.JsonNull) as Prisma.InputJsonValue,
        evidence: (input.evidence ?? Prisma.JsonNull) as Prisma.InputJsonValue,
        error: input.error ?? null,
        settledAt: target === "OUTCOME_UNKNOWN" ? null : new Date(),
      },
    });
    if (target === "FAILED" && isPastAttemptLimit(row)) {
      const handed = await handFailureToPeople(tx, row);
      return { execution: toExecutionView(handed.execution), task: handed.task, leaseConflict: await leaseConflictOf(tx, row.taskId, input.fencing_token, actor) };
    }
    const next = target === "SUCCEEDED" ? (input.next_status ?? "RUNNING") : target === "FAILED" ? "RUNNING" : "RECONCILING";
    try {
      const task = await moveTaskAfterTool(tx, row, next, actor, `${row.tool} ${input.outcome}`, input.fencing_token);
      return { execution: toExecutionView(row), task, leaseConflict: null };
    } catch (error) {
      // The fenced CAS matched no row and raised no SQL error, so this
      // transaction is intact: the outcome commits without the task move.
      if (!(isAppError(error) && error.code === "lease_conflict")) throw error;
      const leaseConflict = await leaseConflictOf(tx, row.taskId, input.fencing_token, actor);
      return { execution: toExecutionView(row), task: null, leaseConflict: leaseConflict ?? { message: error.message, lease: null } };
    }
  });
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
async function recordSuccessAfterFailure(db: Db, existing: Execution, input: z.infer<typeof RecordOutcomeInputSchema>, actor: Actor, deps: ConnectorDeps): Promise<CorrectedOutcome> {
  // The provider is asked outside any transaction; the CAS below is against the version read before it.
  const found = await confirmReportedSuccess(db, existing, { result: input.result, evidence: input.evidence }, actor, deps);
  return db.$transaction(async (tx) => {
    const corrected = await settleSuccessAfterFailure(tx, existing, found, { actor, taskActor: ledgerActor }, { why: `success reported by ${actor.identity} after the attempt was recorded ${existing.status}` });
    // The task was the ledger's to move; a worker whose lease was taken over is still told to stop.
    const leaseConflict = await leaseConflictOf(tx, existing.taskId, input.fencing_token, actor);
    return { execution: toExecutionView(corrected.execution), task: corrected.task.task, leaseConflict, correction: corrected.task };
  });
}

/** An irreversible call whose failure would be safe to retry but has used up its tool's attempts: people decide, not another automatic attempt. */


/** Throws lease_conflict when `token` (or its absence) is not the task's current lease for `actor` (leaseRefusal); in a transaction, holds the lease row until commit. */
async function refuseUnlessLeaseCurrent(db: Db | Tx, taskId: string, token: string | undefined, actor: Actor, what: string): Promise<void> {
  const rows = await db.$queryRaw<{ task_id: string }[]>`SELECT task_id FROM leases WHERE task_id = ${taskId} FOR SHARE`;
  const lease = rows.length ? await getLease(db, taskId) : null;
  const refusal = leaseRefusal(lease, token, actor);
  if (refusal === null) return;
  throw new AppError("lease_conflict", `${what}: ${refusal}.`, {
    violations: [{ invariant: "fencing_token_current", message: refusal }],
    holder: lease?.holder,
    fencingToken: lease?.fencingToken,
    leaseId: lease?.leaseId,
  });
}

/**
 * Whether a fenced write by `actor` with `token` would be refused now: the
 * rule of the task CAS (lib/use-cases/tasks/tasks.ts), read rather than written. A
 * token must be the actor's live lease; an agent without one may not write
 * while any lease is live; people and the system are not fenced.
 */
async function leaseConflictOf(db: Db | Tx, taskId: string, token: string | undefined, actor: Actor): Promise<LeaseConflict | null> {
  if (token === undefined && actor.kind !== "agent") return null;
  const lease = await getLease(db, taskId);
  const refusal = leaseRefusal(lease, token, actor);
  if (refusal === null) return null;
  return {
    message: `${refusal}. The outcome is recorded; the task was not moved. Stop working on this task: its lease holder continues from the recorded outcome.`,
    lease,
  };
}

/**
 * Moves the task out of WAITING_FOR_TOOL after an outcome. If the task has
 * moved on meanwhile (an operator cancelled it), the outcome is still
 * recorded; an irreversible effect that succeeded on a task that has ended
 * is a divergence to look at, not something to hide.
 */
export async function moveTaskAfterTool(
  tx: Tx,
  execution: Execution,
  to: string,
  actor: Actor,
  reason: string,
  fencing_token?: string,
): Promise<TaskView | null> {
  const task = await tx.task.findUnique({ where: { id: execution.taskId }, select: { version: true, status: true, workflowDigest: true } });
  if (!task) return null;
  if (task.status === "WAITING_FOR_TOOL") {
    return (await transitionTaskInTransaction(tx, execution.taskId, { expected_version: task.version, to, reason, fencing_token }, actor)).task;
  }
  const def = getWorkflowByDigest(task.workflowDigest);
  const ended = !!def?.states[task.status]?.terminal && !def.states[task.status]?.success;
  // Only an outcome that would have moved the task on (success) can contradict its end.
  if (to === "RUNNING" || to === "VALIDATING") await raiseIfEffectAfterTaskEnded(tx, execution, { status: task.status, ended }, actor);
  return null;
}



async function refuseWhileDiverged(db: Db | Tx, taskId: string): Promise<void> {
  if (await hasOpenDivergence(db, taskId)) {
    throw new AppError("invariant_violated", `Task ${taskId} has an open divergence alert: nothing irreversible proceeds until it is resolved.`, {
      violations: [{ invariant: "no_irreversible_effect_while_diverged", message: "Resolve the task's divergence alerts first." }],
    });
  }
}

function parseRequest<S extends z.ZodType>(schema: S, request: unknown): z.infer<S> {
  try {
    return parseOrThrow(schema, request);
  } catch (error) {
    if (error instanceof AppError && error.details.errors) {
      const errors = error.details.errors.map((e) => ({ field: e.field ? `request.${e.field}` : "request", message: e.message }));
      throw new AppError("validation_failed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
    }
    throw error;
  }
}






