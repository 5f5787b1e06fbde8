import type { Db, Tx } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { AppError } from "@/lib/core/errors";
import type { Execution, Prisma, Review, ReviewDecision } from "@/lib/generated/prisma/client";
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
import { readableText, sealText } from "@/lib/stores/field-encryption";

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
 * Sealed at rest (docs/encryption.md): a review's reason, its customer id
 * and every decision's reason; the audit entries quote them sealed. Every
 * row this module returns is opened, and the reads the use cases share
 * (findReview, findReviews) open them; nothing reads `db.review` for these
 * columns directly. `customer_id` is sealed like the rest rather than kept
 * searchable (no blind index): nothing filters, sorts or searches reviews by
 * customer (the queue is ordered by created_at, filtered by status), so a
 * keyed hash would only add a way to link one customer's reviews. A search
 * by customer would need an HMAC blind index column (a schema change).
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

/** Where a review's confidential value is sealed: the context of its envelope. */
function reviewContext(column: "reason" | "customer_id", reviewId: string): string {
  return `reviews.${column}:${reviewId}`;
}

function decisionContext(decisionId: string): string {
  return `review_decisions.reason:${decisionId}`;
}

/**
 * The row with its reason and customer id opened. Reviews are read by
 * people and by decisions that never act on these words, so a value whose
 * key was destroyed reads "[sealed value, unreadable: …]" rather than
 * failing the queue.
 */
async function openedReview<T extends Review>(db: Db | Tx, row: T): Promise<T> {
  const [reason, customerId] = await Promise.all([
    readableText(db, row.reason, reviewContext("reason", row.id)),
    row.customerId === null ? null : readableText(db, row.customerId, reviewContext("customer_id", row.id)),
  ]);
  return { ...row, reason, customerId };
}

async function openedReviewWithDecisions(db: Db | Tx, row: ReviewWithDecisions): Promise<ReviewWithDecisions> {
  const [review, decisions] = await Promise.all([
    openedReview(db, row),
    Promise.all(
      row.decisions.map(async (d) => ({ ...d, reason: await readableText(db, d.reason, decisionContext(d.id)) })),
    ),
  ]);
  return { ...review, decisions };
}

const decisionsOldestFirst = {
  decisions: { orderBy: [{ createdAt: "asc" as const }, { id: "asc" as const }] },
} satisfies Prisma.ReviewInclude;

/** A review with its decisions (oldest first), opened; null when there is none. */
export async function findReview(
  db: Db | Tx,
  where: Prisma.ReviewWhereUniqueInput,
): Promise<ReviewWithDecisions | null> {
  const row = await db.review.findUnique({ where, include: decisionsOldestFirst });
  return row ? openedReviewWithDecisions(db, row) : null;
}

/** Reviews with their decisions (oldest first), opened. */
export async function findReviews(
  db: Db | Tx,
  args: Omit<Prisma.ReviewFindManyArgs, "select" | "include" | "omit">,
): Promise<ReviewWithDecisions[]> {
  const rows = await db.review.findMany({ ...args, include: decisionsOldestFirst });
  return Promise.all(rows.map((row) => openedReviewWithDecisions(db, row)));
}

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
  const words = reason.slice(0, 2000);
  if (existing) {
    const status: ReviewStatus = existing.status === "ESCALATED" ? "ESCALATED" : "OPEN";
    const { count } = await tx.review.updateMany({
      where: { id: existing.id, version: existing.version },
      data: {
        status,
        decidedAt: null,
        reason: await sealText(tx, reviewContext("reason", existing.id), words),
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
    return openedReview(tx, reopened);
  }
  const id = newId("rev");
  const terms = await termsOf(tx, execution);
  const review = await tx.review.create({
    data: {
      id,
      taskId: execution.taskId,
      executionId: execution.id,
      reason: await sealText(tx, reviewContext("reason", id), words),
      ...terms,
      customerId:
        terms.customerId === null ? null : await sealText(tx, reviewContext("customer_id", id), terms.customerId),
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
  return { ...review, reason: words, customerId: terms.customerId };
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
  return openedReview(tx, closed);
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
    const fresh = await findReview(tx, { id: review.id });
    if (!fresh) throw new AppError("not_found", `Review ${review.id} does not exist.`);
    throw reviewConflict(fresh, review.version);
  }
  return openedReview(tx, await tx.review.findUniqueOrThrow({ where: { id: review.id } }));
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
  const id = newId("revd");
  // A person's words: sealed in the row, and the audit entry quotes them sealed.
  const reason = await sealText(tx, decisionContext(id), decision.reason);
  await tx.reviewDecision.create({
    data: { id, reviewId: review.id, round: decision.round, kind: decision.kind, actor: actor.identity, reason },
  });
  await appendAuditEntry(tx, reviewDecidedAuditEntry(review, decision.kind, reason, actor));
}

/** `fresh` as findReview reads it (opened). */
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
