import { z } from "zod";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { waitsForPeople } from "@/lib/model/workflows/ledger-states";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Prisma, Execution, Review } from "@/lib/generated/prisma/client";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { performEffect, recordMismatches, type ConnectorDeps, type EffectOutcome } from "@/lib/connectors/effects";
import { hasOpenDivergence } from "@/lib/use-cases/alerts/divergence";
import {
  getExecutionRowOrThrow,
  insertIntent,
  isPastAttemptLimit,
  moveExecution,
  toExecutionView,
  type ExecutionView,
} from "@/lib/stores/execution-store";
import { enqueueOutbox } from "@/lib/stores/messaging";
import { reviewClosedAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import {
  approvalsOf,
  casReview,
  currentRound,
  openReview,
  recordReviewDecision,
  findReview,
  reviewConflict,
  reviewDecisionKinds,
  toReviewView,
  undecidedStatuses,
  type ReviewDecisionKind,
  type ReviewView,
  type ReviewWithDecisions,
} from "@/lib/stores/review-store";
import { moveTaskAfterSettlement } from "@/lib/use-cases/executions/settle-task";
import { openTaskView, type TaskView } from "@/lib/stores/tasks/task-views";
import { findTaskRow } from "@/lib/stores/tasks/task-store";
import { parseOrThrow } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { handFailureToPeople } from "@/lib/use-cases/reviews/hand-failure-to-people";
import { isNeverSent } from "@/lib/use-cases/reviews/review-views";
import { lookUpEffect } from "@/lib/use-cases/tools/look-up-effect";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";
import { compensationRequestOf } from "@/lib/model/tools/compensation";
import { reservationOf } from "@/lib/model/executions/budget-reservation";
import { refuseUnlessReservationFits } from "@/lib/use-cases/executions/budget-reservation";
import { refuseSecondCompensation } from "@/lib/use-cases/executions/compensation";
import { parseToolRequest, toolForNewIntent } from "@/lib/use-cases/executions/tool-request";

/**
 * A person's decision on a frozen action (lib/stores/review-store.ts owns
 * the rows). Every decision is a CAS on the review's version and leaves a
 * review_decisions row, an execution event and the task's transitions, in
 * one transaction; the only thing outside it is the provider call of a
 * re-execution, which is preceded by a committed SENT (write-ahead), so a
 * crash during the call leaves a SENT the reconciler settles.
 *
 * Four eyes: at or above VERITY_FOUR_EYES_THRESHOLD_CENTS a re-execution
 * needs the approval of two different people. The first approval is recorded
 * and the review stays open; the second, by someone else, executes. One
 * decision per person per round (a unique key), so nobody approves twice.
 * Accepting the provider's evidence needs one person: it moves no money, and
 * it is refused unless the provider shows the effect, matching the request.
 *
 * Never sent: an intent the instruction guard froze (lib/stores/instructions.ts)
 * was never sent, so there is nothing to look up. approve_execute sends it for
 * the first time (the same attempt, the same idempotency key); reject cancels
 * it; accepting evidence is refused, there being none.
 */

/** The identity under which a decision's re-execution reports the provider's answer. */
export const reviewExecutorActor: Actor = { identity: "spiffe://verity.local/system/reviews", kind: "system" };

export const DecideReviewInputSchema = z.strictObject({
  expected_version: z.number().int().min(1),
  decision: z.enum(reviewDecisionKinds),
  reason: z.string().trim().min(1, "a reason is required").max(2000),
});
export type DecideReviewInput = z.infer<typeof DecideReviewInputSchema>;

export interface DecideResult {
  review: ReviewView;
  execution: ExecutionView;
  task: TaskView | null;
  /** True when this decision sent the request to the provider again. */
  executed: boolean;
  /** What the provider answered to the re-execution. */
  outcome?: EffectOutcome["kind"];
  /** "Accept evidence & compensate": the compensation recorded and released to the task's agent. */
  compensation?: ExecutionView;
}

/**
 * A person's decision on a review. `expected_version` is the review version
 * they saw: of two people deciding at once, one wins and the other gets
 * version_conflict with the review as it is now in `details.review`.
 */
export async function decideReview(
  db: Db,
  reviewId: string,
  raw: unknown,
  actor: Actor,
  deps: ConnectorDeps,
  options: { callTimeoutMs?: number } = {},
): Promise<DecideResult> {
  const input = parseOrThrow(DecideReviewInputSchema, raw);
  if (actor.kind !== "user")
    throw new AppError("forbidden", "Reviews are decided by people; an agent or a system process cannot decide one.");
  const review = await findReview(db, { id: reviewId });
  if (!review) throw new AppError("not_found", `Review ${reviewId} does not exist.`);
  if (review.version !== input.expected_version) throw reviewConflict(review, input.expected_version);
  if (!undecidedStatuses.includes(review.status)) {
    throw violation(
      "review_undecided",
      `Review ${review.id} is already ${review.status}; a decided review does not change.`,
    );
  }
  if (currentRound(review).some((d) => d.actor === actor.identity)) {
    throw violation(
      "one_decision_per_person",
      `${actor.identity} already decided in round ${review.round} of review ${review.id}; a second approval must come from someone else.`,
    );
  }
  const execution = await getExecutionRowOrThrow(db, review.executionId);
  if (execution.status !== "NEEDS_HUMAN") {
    throw violation(
      "review_execution_waiting",
      `Execution ${execution.id} is ${execution.status}, not waiting for a decision.`,
    );
  }
  const tool = await toolOfExecutionOrThrow(db, execution);
  const context: DecisionContext = {
    review,
    execution,
    tool,
    input,
    actor,
    deps,
    callTimeoutMs: options.callTimeoutMs,
  };
  try {
    switch (input.decision) {
      case "escalate":
        return await escalate(db, context);
      case "reject":
        return await reject(db, context);
      case "approve_accept_evidence":
        return await acceptEvidence(db, context);
      case "approve_compensate":
        return await acceptAndCompensate(db, context);
      case "approve_execute":
        return await approveExecute(db, context);
    }
  } catch (error) {
    // The unique key (review, round, person) behind the check above, for a person racing themself.
    if (isUniqueViolation(error)) {
      throw violation(
        "one_decision_per_person",
        `${actor.identity} already decided in round ${review.round} of review ${review.id}.`,
      );
    }
    throw error;
  }
}

interface DecisionContext {
  review: ReviewWithDecisions;
  execution: Execution;
  /** The tool version the call was recorded under. */
  tool: ToolDefinition;
  input: DecideReviewInput;
  actor: Actor;
  deps: ConnectorDeps;
  callTimeoutMs?: number;
}

async function escalate(db: Db, c: DecisionContext): Promise<DecideResult> {
  return db.$transaction(async (tx) => {
    const review = await casReview(tx, c.review, { status: "ESCALATED" });
    await recordDecision(tx, c, review);
    const execution = await moveExecution(tx, c.execution, "NEEDS_HUMAN", c.actor, {
      reason: `review escalated by ${c.actor.identity}: ${c.input.reason}`,
    });
    return {
      review: await reviewViewIn(tx, review.id),
      execution: toExecutionView(execution),
      task: null,
      executed: false,
    };
  });
}

async function reject(db: Db, c: DecisionContext): Promise<DecideResult> {
  return db.$transaction(async (tx) => {
    const review = await casReview(tx, c.review, { status: "REJECTED", decidedAt: new Date() });
    await recordDecision(tx, c, review);
    const execution = await moveExecution(tx, c.execution, "CANCELLED", c.actor, {
      reason: `rejected by ${c.actor.identity}: ${c.input.reason}`,
      data: { error: `rejected in review: ${c.input.reason}`.slice(0, 2000), settledAt: new Date() },
    });
    const task = await moveTaskAfterSettlement(
      tx,
      execution,
      "CANCELLED",
      c.actor,
      // The reviewer's words stay in the review's decision, sealed at rest: the
      // task's transition names the decision, since transition reasons are
      // not sealed (docs/encryption.md).
      `review ${review.id} rejected the ${execution.tool} (the reason is the review's decision by ${c.actor.identity})`,
    );
    return { review: await reviewViewIn(tx, review.id), execution: toExecutionView(execution), task, executed: false };
  });
}

/** The provider's record of the effect, asked now, matching the request field by field; or the refusal, in words. */
async function acceptedEvidenceOrRefuse(
  db: Db,
  c: DecisionContext,
): Promise<{ record: { id: string } & Record<string, unknown>; evidence: Record<string, unknown> }> {
  if (isNeverSent(c.execution)) {
    throw violation(
      "accept_evidence_requires_sent_action",
      `Execution ${c.execution.id} was frozen before it was ever sent: the provider cannot have applied it, so there is no evidence to accept. Approve sending it, or reject it.`,
    );
  }
  // Asked now, not taken from what anyone saw earlier: the decision rests on the provider's current record.
  const lookup = await lookUpEffect(db, c.execution, c.deps, { timeoutMs: c.callTimeoutMs });
  if (lookup.kind !== "found") {
    const said =
      lookup.kind === "not_found" ? "has no such effect" : `could not be asked (${lookup.reason}: ${lookup.message})`;
    throw violation(
      "accept_evidence_requires_provider_record",
      `The provider ${said} under key ${c.execution.idempotencyKey}; there is no evidence to accept.`,
      {
        lookup: lookup.kind === "not_found" ? { kind: "not_found" } : { kind: "unknown", reason: lookup.reason },
      },
    );
  }
  const mismatches = recordMismatches(c.execution, lookup.record);
  if (mismatches.length > 0) {
    throw violation(
      "accept_evidence_must_match_request",
      `The provider's record ${lookup.record.id} differs from the request in ${mismatches.join(", ")}; it is not this effect.`,
      {
        mismatches,
        record: lookup.record,
      },
    );
  }
  const evidence = {
    source: "lookup",
    accepted_by: c.actor.identity,
    idempotency_key: c.execution.idempotencyKey,
    record: lookup.record,
    provider: lookup.evidence,
  };
  return { record: lookup.record, evidence };
}

async function acceptEvidence(db: Db, c: DecisionContext): Promise<DecideResult> {
  const accepted = await acceptedEvidenceOrRefuse(db, c);
  return db.$transaction(async (tx) => {
    const review = await casReview(tx, c.review, { status: "APPROVED", decidedAt: new Date() });
    await recordDecision(tx, c, review);
    const execution = await settleAsAccepted(tx, c, accepted);
    const task = await moveTaskAfterSettlement(
      tx,
      execution,
      "VALIDATING",
      c.actor,
      `review ${review.id}: the provider's record ${accepted.record.id} accepted as evidence`,
    );
    return { review: await reviewViewIn(tx, review.id), execution: toExecutionView(execution), task, executed: false };
  });
}

async function settleAsAccepted(
  tx: Tx,
  c: DecisionContext,
  accepted: Awaited<ReturnType<typeof acceptedEvidenceOrRefuse>>,
): Promise<Execution> {
  return moveExecution(tx, c.execution, "RECONCILED_SUCCEEDED", c.actor, {
    reason: `evidence accepted by ${c.actor.identity}: ${c.input.reason}`,
    evidence: accepted.evidence,
    data: {
      result: accepted.record as Prisma.InputJsonValue,
      evidence: accepted.evidence as unknown as Prisma.InputJsonValue,
      error: null,
      settledAt: new Date(),
    },
  });
}

/**
 * "Accept evidence & compensate" (seed 000: "if uncertain, compensate or
 * human-gate"): the provider's record says the effect happened, and the
 * person decides it must not stand. In one transaction the effect is
 * settled RECONCILED_SUCCEEDED on that record, and its compensation is
 * recorded as a call of its own (INTENT_RECORDED under its own key, linked
 * by compensates_id, the request built by the tool's compensation_request
 * and checked by the compensating tool's schema) and released to the
 * task's agent, which sends it as it sends any released call; its outcome
 * is recorded and reconciled like any other. Verity sends nothing itself:
 * it holds no credentials for the tools it did not write.
 */
async function acceptAndCompensate(db: Db, c: DecisionContext): Promise<DecideResult> {
  const compensatingName = c.tool.compensating_tool;
  if (!compensatingName)
    throw violation(
      "compensating_tool_declared",
      `${c.execution.tool} v${c.tool.version} declares no compensating tool: its effect cannot be undone by a tool call. Accept the evidence, or reject.`,
    );
  const accepted = await acceptedEvidenceOrRefuse(db, c);
  const compensating = await toolForNewIntent(db, compensatingName);
  const built = compensationRequestOf(c.tool, {
    request: c.execution.request as Record<string, unknown>,
    result: accepted.record,
  });
  if (!built.ok)
    throw violation(
      "compensation_request_complete",
      `The compensation's request cannot be built: ${built.missing.map((m) => `${m.field} (${m.pointer})`).join(", ")} not found in the effect's request or the provider's record.`,
    );
  const request = parseToolRequest(compensating, built.request);
  return db.$transaction(async (tx) => {
    await refuseUnlessTaskWaitsForPeople(tx, c.execution.taskId, "a compensation is released");
    await refuseSecondCompensation(tx, c.execution.id);
    const review = await casReview(tx, c.review, { status: "APPROVED", decidedAt: new Date() });
    await recordDecision(tx, c, review);
    const execution = await settleAsAccepted(tx, c, accepted);
    const reservation = reservationOf(compensating, request);
    const compensation = await insertIntent(
      tx,
      {
        taskId: c.execution.taskId,
        toolCallId: await compensationCallIdOf(tx, c.execution),
        tool: compensating.name,
        toolVersion: compensating.version,
        irreversible: compensating.irreversible,
        request,
        instructionId: null,
        leaseToken: null,
        reserved: reservation && reservation !== "unreadable" ? reservation : null,
        compensatesId: execution.id,
        evidence: { released_by_review: review.id, approved_by: [c.actor.identity] },
        reason: `compensation of ${execution.id} (${execution.tool}, the provider's record ${accepted.record.id}) decided by ${c.actor.identity}, released to the task's agent to send: ${c.input.reason}`,
      },
      c.actor,
    );
    await appendAuditEntry(
      tx,
      reviewClosedAuditEntry(
        review,
        `approved: the effect accepted and compensated by ${compensating.name} (${compensation.id}), released to the agent holding the task`,
        c.actor,
      ),
    );
    const moved = await moveTaskAfterSettlement(
      tx,
      compensation,
      "RUNNING",
      c.actor,
      `review ${review.id}: ${execution.tool} accepted on the provider's record ${accepted.record.id}; ${compensating.name} released to its agent to undo it (${compensation.id})`,
    );
    if (reservation)
      await refuseUnlessReservationFits(
        tx,
        c.execution.taskId,
        (moved ?? (await taskViewIn(tx, c.execution.taskId))).state.budget.currency_committed_usd,
        reservation,
        compensation.id,
      );
    return {
      review: await reviewViewIn(tx, review.id),
      execution: toExecutionView(execution),
      task: moved,
      executed: false,
      compensation: toExecutionView(compensation),
    };
  });
}

async function taskViewIn(tx: Tx, taskId: string): Promise<TaskView> {
  const row = await findTaskRow(tx, taskId);
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return openTaskView(tx, row);
}

/**
 * The compensation's own logical call: its own idempotency key, never the
 * effect's; `compensate.<the effect's call>`, or with a number after it when
 * the task's agent already used that id for a call of its own.
 */
async function compensationCallIdOf(tx: Tx, effect: Execution): Promise<string> {
  const base = `compensate.${effect.toolCallId}`.slice(0, 120);
  const taken = new Set(
    (
      await tx.execution.findMany({
        where: { taskId: effect.taskId, toolCallId: { startsWith: base } },
        select: { toolCallId: true },
      })
    ).map((e) => e.toolCallId),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}.${n}`)) return `${base}.${n}`;
}

async function approveExecute(db: Db, c: DecisionContext): Promise<DecideResult> {
  const approvals = approvalsOf(c.review).length + 1;
  if (c.execution.irreversible && (await hasOpenDivergence(db, c.execution.taskId))) {
    throw violation(
      "no_irreversible_effect_while_diverged",
      `Task ${c.execution.taskId} has an open divergence alert: resolve it before anything irreversible proceeds.`,
    );
  }
  if (approvals < c.review.requiredApprovals) {
    return db.$transaction(async (tx) => {
      const review = await casReview(tx, c.review, {});
      await recordDecision(tx, c, review);
      const execution = await moveExecution(tx, c.execution, "NEEDS_HUMAN", c.actor, {
        reason: `approval ${approvals} of ${c.review.requiredApprovals} by ${c.actor.identity}: ${c.input.reason}`,
      });
      return {
        review: await reviewViewIn(tx, review.id),
        execution: toExecutionView(execution),
        task: null,
        executed: false,
      };
    });
  }

  const approvers = [...approvalsOf(c.review).map((d) => d.actor), c.actor.identity];
  if (c.tool.reconciliation.method !== "connector") return releaseToAgent(db, c, approvers);
  // Write-ahead: SENT (a new attempt under the same idempotency key) commits
  // before the request leaves. Nothing about the task moves yet: until the
  // provider answers, it is still in people's hands.
  const { review: approved, sent } = await db.$transaction(async (tx) => {
    await refuseUnlessTaskWaitsForPeople(tx, c.execution.taskId, "the action is executed");
    const review = await casReview(tx, c.review, {});
    await recordDecision(tx, c, review);
    // A never-sent action goes out as the attempt it is; one that left before gets a new attempt under the same key.
    const firstSend = isNeverSent(c.execution);
    const attempt = firstSend ? c.execution.attempt : c.execution.attempt + 1;
    const sent = await moveExecution(tx, c.execution, "SENT", c.actor, {
      reason: firstSend
        ? `sending for the first time (attempt ${attempt}, its idempotency key) on the approval of ${approvers.join(" and ")}, over the instruction that froze it: ${c.input.reason}`
        : `re-executing (attempt ${attempt}, same idempotency key) on the approval of ${approvers.join(" and ")}: ${c.input.reason}`,
      data: { attempt, attemptId: `${c.execution.id}.${attempt}`, sentAt: new Date(), settledAt: null, error: null },
    });
    return { review, sent };
  });

  const outcome = await performEffect(sent, c.deps, { timeoutMs: c.callTimeoutMs });
  try {
    return await db.$transaction((tx) => recordReExecution(tx, c, approved, sent, outcome));
  } catch (error) {
    // A provider event or the reconciler settled the attempt first (the
    // webhook can beat the HTTP answer): their record stands; report it.
    if (!(error instanceof AppError && error.code === "version_conflict")) throw error;
    const [execution, review] = await Promise.all([
      getExecutionRowOrThrow(db, sent.id),
      findReview(db, { id: approved.id }),
    ]);
    if (!review) throw new AppError("not_found", `Review ${approved.id} does not exist.`);
    return {
      review: toReviewView(review),
      execution: toExecutionView(execution),
      task: null,
      executed: true,
      outcome: outcome.kind,
    };
  }
}

/**
 * "Approve & execute" for a registered tool. Verity holds no credentials
 * for a tool it did not write, so it cannot send the call itself; the honest
 * equivalent is to release it: a new attempt under the same idempotency key
 * (INTENT_RECORDED), the review APPROVED, and the task back to RUNNING, in
 * one transaction. The agent holding the task takes it up by recording the
 * same intent again (recordIntent moves the task to WAITING_FOR_TOOL) and
 * sends it under that key, so the provider applies it at most once; its
 * outcome is recorded and reconciled like any other attempt's, and an
 * unknown one comes back to this queue as the review's next round.
 */
async function releaseToAgent(db: Db, c: DecisionContext, approvers: string[]): Promise<DecideResult> {
  return db.$transaction(async (tx) => {
    await refuseUnlessTaskWaitsForPeople(tx, c.execution.taskId, "the action is released");
    const review = await casReview(tx, c.review, { status: "APPROVED", decidedAt: new Date() });
    await recordDecision(tx, c, review);
    const firstSend = isNeverSent(c.execution);
    const attempt = firstSend ? c.execution.attempt : c.execution.attempt + 1;
    const released = await moveExecution(tx, c.execution, "INTENT_RECORDED", c.actor, {
      reason: `released to the task's agent to send (attempt ${attempt}, the same idempotency key) on the approval of ${approvers.join(" and ")}: ${c.input.reason}`,
      // What markSent reads: people approved sending this attempt over the instructions that froze it.
      evidence: { released_by_review: review.id, approved_by: approvers },
      data: {
        attempt,
        attemptId: `${c.execution.id}.${attempt}`,
        sentAt: null,
        settledAt: null,
        error: null,
        leaseToken: null,
      },
    });
    await appendAuditEntry(
      tx,
      reviewClosedAuditEntry(
        review,
        `approved: released to the agent holding the task, to send under the same key`,
        c.actor,
      ),
    );
    const moved = await moveTaskAfterSettlement(
      tx,
      released,
      "RUNNING",
      c.actor,
      `review ${review.id}: ${released.tool} released to its agent to send under key ${released.idempotencyKey}`,
    );
    return {
      review: await reviewViewIn(tx, review.id),
      execution: toExecutionView(released),
      task: moved,
      executed: false,
    };
  });
}

async function recordReExecution(
  tx: Tx,
  c: DecisionContext,
  approved: Review,
  sent: Execution,
  outcome: EffectOutcome,
): Promise<DecideResult> {
  switch (outcome.kind) {
    case "succeeded": {
      const evidence = {
        source: "re-execution",
        idempotency_key: sent.idempotencyKey,
        record: outcome.record,
        provider: outcome.evidence,
      };
      const execution = await moveExecution(tx, sent, "SUCCEEDED", reviewExecutorActor, {
        reason: `the provider applied the approved ${sent.tool} (${outcome.record.id})`,
        evidence,
        data: {
          result: outcome.record as Prisma.InputJsonValue,
          evidence: evidence as unknown as Prisma.InputJsonValue,
          error: null,
          settledAt: new Date(),
        },
      });
      const review = await casReview(tx, approved, { status: "APPROVED", decidedAt: new Date() });
      await announceDecision(tx, review, execution, "approve_execute", c.actor, "succeeded");
      await appendAuditEntry(
        tx,
        reviewClosedAuditEntry(review, `the approved re-execution succeeded`, reviewExecutorActor),
      );
      const task = await moveTaskAfterSettlement(
        tx,
        execution,
        "VALIDATING",
        c.actor,
        `review ${review.id}: approved ${sent.tool} succeeded at the provider`,
      );
      return {
        review: await reviewViewIn(tx, review.id),
        execution: toExecutionView(execution),
        task,
        executed: true,
        outcome: "succeeded",
      };
    }
    case "failed": {
      // The provider stated that nothing was applied: a known failure, which
      // the agent may retry under the same key; the decision itself is done.
      const execution = await moveExecution(tx, sent, "FAILED", reviewExecutorActor, {
        reason: `the provider refused the approved ${sent.tool}: ${outcome.reason}`,
        evidence: { source: "re-execution", failure: outcome },
        // What the provider said about a retry, in the shape every failure keeps it (execution-rules.ts retryAdviceOf).
        data: {
          result: { reason: outcome.reason, retryable: outcome.retryable },
          error: `${outcome.reason}: ${outcome.message}`.slice(0, 2000),
          settledAt: new Date(),
        },
      });
      const review = await casReview(tx, approved, { status: "APPROVED", decidedAt: new Date() });
      await announceDecision(tx, review, execution, "approve_execute", c.actor, "failed");
      await appendAuditEntry(
        tx,
        reviewClosedAuditEntry(review, `the approved re-execution failed`, reviewExecutorActor),
      );
      if (isPastAttemptLimit(execution)) {
        // Refused again past the tool's attempts: back to the review as its next round, not to the agent.
        const handed = await handFailureToPeople(tx, execution);
        return {
          review: await reviewViewIn(tx, review.id),
          execution: toExecutionView(handed.execution),
          task: handed.task,
          executed: true,
          outcome: "failed",
        };
      }
      const task = await moveTaskAfterSettlement(
        tx,
        execution,
        "RUNNING",
        c.actor,
        `review ${review.id}: approved ${sent.tool} failed at the provider (${outcome.reason}); nothing was applied`,
      );
      return {
        review: await reviewViewIn(tx, review.id),
        execution: toExecutionView(execution),
        task,
        executed: true,
        outcome: "failed",
      };
    }
    case "unknown": {
      // Unknown again: by the reconciliation rules it goes back to people,
      // with this attempt's facts in its history; the review stays open.
      const unknown = await moveExecution(tx, sent, "OUTCOME_UNKNOWN", reviewExecutorActor, {
        reason: `the approved ${sent.tool} has an unknown outcome: ${outcome.reason}`,
        evidence: { source: "re-execution", unknown: outcome },
        data: { error: `${outcome.reason}: ${outcome.message}`.slice(0, 2000) },
      });
      const execution = await moveExecution(tx, unknown, "NEEDS_HUMAN", reviewExecutorActor, {
        reason: "still unknown after the re-execution: back to the review",
      });
      const review = await openReview(
        tx,
        execution,
        `re-execution outcome unknown (${outcome.reason}); look the effect up or decide again`,
        reviewExecutorActor,
      );
      await announceDecision(tx, review, execution, "approve_execute", c.actor, "unknown");
      return {
        review: await reviewViewIn(tx, review.id),
        execution: toExecutionView(execution),
        task: null,
        executed: true,
        outcome: "unknown",
      };
    }
  }
}

async function recordDecision(tx: Tx, c: DecisionContext, review: Review): Promise<void> {
  // The round the person decided on: the CAS just confirmed the review is still the one they saw.
  await recordReviewDecision(
    tx,
    review,
    { round: c.review.round, kind: c.input.decision, reason: c.input.reason },
    c.actor,
  );
  await announceDecision(tx, review, c.execution, c.input.decision, c.actor);
}

async function announceDecision(
  tx: Tx,
  review: Review,
  execution: Execution,
  decision: ReviewDecisionKind,
  actor: Actor,
  outcome?: EffectOutcome["kind"],
): Promise<void> {
  await enqueueOutbox(tx, {
    task_id: review.taskId,
    topic: "review.decided",
    payload: {
      review_id: review.id,
      execution_id: execution.id,
      decision,
      actor: actor.identity,
      status: review.status,
      ...(outcome ? { outcome } : {}),
    },
  });
}

async function reviewViewIn(tx: Tx, reviewId: string): Promise<ReviewView> {
  const review = await findReview(tx, { id: reviewId });
  if (!review) throw new AppError("not_found", `Review ${reviewId} does not exist.`);
  return toReviewView(review);
}

/** What only happens while the task is in people's hands (waitsForPeople): `what` says what, in the refusal. */
async function refuseUnlessTaskWaitsForPeople(tx: Tx, taskId: string, what: string): Promise<void> {
  const task = await tx.task.findFirst({ where: { id: taskId }, select: { status: true, workflowDigest: true } });
  if (!waitsForPeople(task ? getWorkflowByDigest(task.workflowDigest) : undefined, task?.status))
    throw violation(
      "task_waiting_for_human",
      `Task ${taskId} is ${task?.status ?? "gone"}; ${what} only while its task waits for this decision.`,
    );
}

function violation(invariant: string, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("invariant_violated", message, { violations: [{ invariant, message }], ...extra });
}
