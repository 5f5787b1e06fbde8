import type { Tx } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { AppError } from "@/lib/core/errors";
import type { Execution, Review, ReviewDecision } from "@/lib/generated/prisma/client";
import type { ReviewDecisionKind, ReviewStatus } from "@/lib/generated/prisma/enums";
import { newId } from "@/lib/core/ids";
import { enqueueOutbox } from "@/lib/stores/messaging";
import {
  reviewClosedAuditEntry,
  reviewDecidedAuditEntry,
  reviewOpenedAuditEntry,
} from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import type { Actor } from "@/lib/model/actor";
import { valueAtPointer } from "@/lib/model/tools/json-pointer";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";

/**
 * The owner of `reviews` and `review_decisions` rows: an irreversible action
 * whose outcome nobody could establish is frozen (execution NEEDS_HUMAN, task
 * WAITING_FOR_HUMAN) until people decide. Every write here is a CAS on the
 * review's version (or its creation), with its audit entry and outbox
 * message, in the caller's transaction. The use cases that freeze an action
 * (the ledger's guard, the reconciler, handFailureToPeople) and the one that
 * decides it (lib/use-cases/reviews/decide-review.ts) build on this module,
 * so none of them needs another's.
 *
 * Rounds: an approved re-execution whose outcome is unknown again (or whose
 * process died, found unknown by the reconciler) reopens the review as the
 * next round. The earlier round's decisions were spent on an attempt that
 * did not settle it; the new round asks again, with new facts, so its
 * approvals start from zero and the same people may decide once more.
 */

export const reviewDecisionKinds = [
  "approve_execute",
  "approve_accept_evidence",
  "approve_compensate",
  "reject",
  "escalate",
] as const satisfies readonly ReviewDecisionKind[];
export const reviewStatuses = ["OPEN", "APPROVED", "REJECTED", "ESCALATED"] as const satisfies readonly ReviewStatus[];
export type { ReviewDecisionKind, ReviewStatus };

/** Still waiting for people: in the queue. */
export const undecidedStatuses: readonly ReviewStatus[] = ["OPEN", "ESCALATED"];

export interface ReviewDecisionView {
  id: string;
  /** The round it was made in (reviews.round at the time). */
  round: number;
  kind: ReviewDecisionKind;
  actor: string;
  reason: string;
  createdAt: Date;
}

export interface ReviewView {
  id: string;
  taskId: string;
  executionId: string;
  reason: string;
  amountCents: number | null;
  currency: string | null;
  customerId: string | null;
  requiredApprovals: number;
  /** The current round: 1, then one more each time the review reopens. */
  round: number;
  /** approve_execute decisions in the current round. */
  approvals: number;
  status: ReviewStatus;
  /** Escalated: still in the queue, flagged for someone more senior. */
  flagged: boolean;
  version: number;
  createdAt: Date;
  decidedAt: Date | null;
  /** Every round's decisions, oldest first; each names its round. */
  decisions: ReviewDecisionView[];
}

export type ReviewWithDecisions = Review & { decisions: ReviewDecision[] };

export function toReviewView(row: ReviewWithDecisions): ReviewView {
  return {
    id: row.id,
    taskId: row.taskId,
    executionId: row.executionId,
    reason: row.reason,
    amountCents: row.amountCents,
    currency: row.currency,
    customerId: row.customerId,
    requiredApprovals: row.requiredApprovals,
    round: row.round,
    approvals: approvalsOf(row).length,
    status: row.status,
    flagged: row.status === "ESCALATED",
    version: row.version,
    createdAt: row.createdAt,
    decidedAt: row.decidedAt,
    decisions: row.decisions.map((d) => ({
      id: d.id,
      round: d.round,
      kind: d.kind,
      actor: d.actor,
      reason: d.reason,
      createdAt: d.createdAt,
    })),
  };
}

/** The decisions that count now: those of the review's current round. */
export function currentRound(review: ReviewWithDecisions): ReviewDecision[] {
  return review.decisions.filter((d) => d.round === review.round);
}

/** Who approved re-execution in the current round, in order. */
export function approvalsOf(review: ReviewWithDecisions): ReviewDecision[] {
  return currentRound(review).filter((d) => d.kind === "approve_execute");
}

/**
 * What the queue shows of the frozen action, from where the tool version's
 * definition says its request holds them: the amount and currency (four
 * eyes at or above VERITY_FOUR_EYES_THRESHOLD_CENTS, in the request's minor
 * units) and the customer, when the request names one. A tool that moves no
 * money has no amount and needs one approval. An amount the definition
 * promises but the request does not hold as an integer needs two: the
 * request was validated against the schema, so that is a fault, and a
 * fault never lowers the bar.
 */
async function termsOf(
  tx: Tx,
  execution: Execution,
): Promise<{
  amountCents: number | null;
  currency: string | null;
  customerId: string | null;
  requiredApprovals: number;
}> {
  const def = await toolDefinitionOf(tx, execution.tool, execution.toolVersion);
  const request = execution.request as Record<string, unknown>;
  const customerId = typeof request.customer_id === "string" ? request.customer_id : null;
  if (!def?.amount) return { amountCents: null, currency: null, customerId, requiredApprovals: 1 };
  const amount = valueAtPointer(request, def.amount.amount_pointer);
  const currency = valueAtPointer(request, def.amount.currency_pointer);
  const amountCents = typeof amount === "number" && Number.isSafeInteger(amount) ? amount : null;
  const fourEyes =
    execution.irreversible && (amountCents === null || amountCents >= getEnv().VERITY_FOUR_EYES_THRESHOLD_CENTS);
  return {
    amountCents,
    currency: typeof currency === "string" ? currency : null,
    customerId,
    requiredApprovals: fourEyes ? 2 : 1,
  };
}

/**
 * Opens the review of an execution that just became NEEDS_HUMAN, in the
 * caller's transaction. One review per execution: if it already has one (a
 * re-execution came back unknown, or the reconciler found it unknown again),
 * that review becomes undecided again with the new reason, as its next round.
 */
export async function openReview(tx: Tx, execution: Execution, reason: string, actor: Actor): Promise<Review> {
  const existing = await tx.review.findUnique({ where: { executionId: execution.id } });
  if (existing) {
    const status: ReviewStatus = existing.status === "ESCALATED" ? "ESCALATED" : "OPEN";
    const { count } = await tx.review.updateMany({
      where: { id: existing.id, version: existing.version },
      data: {
        status,
        decidedAt: null,
        reason: reason.slice(0, 2000),
        round: existing.round + 1,
        version: existing.version + 1,
      },
    });
    if (count === 0)
      throw new AppError("version_conflict", `Review ${existing.id} changed meanwhile.`, {
        currentVersion: existing.version,
      });
    await enqueueOutbox(tx, {
      task_id: execution.taskId,
      topic: "review.opened",
      payload: {
        review_id: existing.id,
        execution_id: execution.id,
        required_approvals: existing.requiredApprovals,
        round: existing.round + 1,
      },
    });
    const reopened = await tx.review.findUniqueOrThrow({ where: { id: existing.id } });
    await appendAuditEntry(tx, reviewOpenedAuditEntry(reopened, actor));
    return reopened;
  }
  const review = await tx.review.create({
    data: {
      id: newId("rev"),
      taskId: execution.taskId,
      executionId: execution.id,
      reason: reason.slice(0, 2000),
      ...(await termsOf(tx, execution)),
      status: "OPEN",
      version: 1,
    },
  });
  await enqueueOutbox(tx, {
    task_id: execution.taskId,
    topic: "review.opened",
    payload: {
      review_id: review.id,
      execution_id: execution.id,
      required_approvals: review.requiredApprovals,
      round: review.round,
    },
  });
  await appendAuditEntry(tx, reviewOpenedAuditEntry(review, actor));
  return review;
}

/**
 * The reconciler settled an execution a person had approved for re-execution
 * (the decision's process died during the provider call): its review is
 * decided by that approval and leaves the queue.
 */
export async function closeReviewForExecution(
  tx: Tx,
  executionId: string,
  note: string,
  actor: Actor,
): Promise<Review | null> {
  const review = await tx.review.findUnique({ where: { executionId } });
  if (!review || !undecidedStatuses.includes(review.status)) return null;
  const { count } = await tx.review.updateMany({
    where: { id: review.id, version: review.version },
    data: { status: "APPROVED", decidedAt: new Date(), version: review.version + 1 },
  });
  if (count === 0)
    throw new AppError("version_conflict", `Review ${review.id} changed meanwhile.`, {
      currentVersion: review.version,
    });
  await enqueueOutbox(tx, {
    task_id: review.taskId,
    topic: "review.decided",
    payload: { review_id: review.id, execution_id: executionId, status: "APPROVED", note },
  });
  const closed = await tx.review.findUniqueOrThrow({ where: { id: review.id } });
  await appendAuditEntry(tx, reviewClosedAuditEntry(closed, note, actor));
  return closed;
}

/** CAS on the review's version; whatever else changes, the version moves by one. */
export async function casReview(
  tx: Tx,
  review: Review,
  data: { status?: ReviewStatus; decidedAt?: Date },
): Promise<Review> {
  const { count } = await tx.review.updateMany({
    where: { id: review.id, version: review.version },
    data: { ...data, version: review.version + 1 },
  });
  if (count === 0) {
    const fresh = await tx.review.findUnique({ where: { id: review.id }, include: { decisions: true } });
    if (!fresh) throw new AppError("not_found", `Review ${review.id} does not exist.`);
    throw reviewConflict(fresh, review.version);
  }
  return tx.review.findUniqueOrThrow({ where: { id: review.id } });
}

/**
 * A person's decision in `round` of `review` (as the CAS just left it): its
 * review_decisions row and audit entry. The unique key (review, round,
 * person) refuses a second decision by the same person in a round.
 */
export async function recordReviewDecision(
  tx: Tx,
  review: Review,
  decision: { round: number; kind: ReviewDecisionKind; reason: string },
  actor: Actor,
): Promise<void> {
  await tx.reviewDecision.create({
    data: {
      id: newId("revd"),
      reviewId: review.id,
      round: decision.round,
      kind: decision.kind,
      actor: actor.identity,
      reason: decision.reason,
    },
  });
  await appendAuditEntry(tx, reviewDecidedAuditEntry(review, decision.kind, decision.reason, actor));
}

export function reviewConflict(fresh: ReviewWithDecisions, expected: number): AppError {
  return new AppError(
    "version_conflict",
    `Expected review version ${expected}, but review ${fresh.id} is at version ${fresh.version} (${fresh.status}). Read it again and decide on what it is now.`,
    {
      currentVersion: fresh.version,
      currentStatus: fresh.status,
      review: toReviewView(fresh),
    },
  );
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): a finished task's reviews and their decisions, in the caller's transaction. */
export async function deleteReviewsOfTask(
  tx: Tx,
  taskId: string,
): Promise<{ review_decisions: number; reviews: number }> {
  const review_decisions = (await tx.reviewDecision.deleteMany({ where: { review: { taskId } } })).count;
  const reviews = (await tx.review.deleteMany({ where: { taskId } })).count;
  return { review_decisions, reviews };
}
