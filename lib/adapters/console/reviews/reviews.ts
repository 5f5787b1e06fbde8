import { createHash } from "node:crypto";
import type { Db } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { getConnectors, recordMismatches } from "@/lib/connectors/effects";
import { lookUpEffect } from "@/lib/use-cases/tools/look-up-effect";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";
import { getReview } from "@/lib/use-cases/reviews/get-review";
import type { Principal } from "@/lib/model/permissions";
import type { ProviderVerdict } from "@/lib/model/inbox/inbox-items";
import {
  maskExecutionEventsForReader,
  maskExecutionForReader,
  maskToolPayloadForReader,
} from "@/lib/use-cases/data-classes/mask-for-reader";
import { listReviews } from "@/lib/use-cases/reviews/list-reviews";
import { type DecideResult } from "@/lib/use-cases/reviews/decide-review";
import { type ReviewDecisionKind, type ReviewStatus, type ReviewView } from "@/lib/stores/review-store";
import { shortIdentity } from "@/lib/adapters/console/shared/format";
import {
  approvalHeadline,
  approvalState,
  decisionInfo,
  reviewStatusInfo,
} from "@/lib/adapters/console/reviews/reviews-format";
import type { DecisionFormState } from "@/lib/adapters/console/reviews/reviews-form";
import {
  isUndecided,
  reviewTabs,
  undecidedStatuses,
  type ReviewTab,
} from "@/lib/adapters/console/reviews/reviews-query";
import type {
  ProviderLookupView,
  ReviewDetailData,
  ReviewItem,
  ReviewQueueData,
} from "@/lib/adapters/console/reviews/reviews-view";

/**
 * The review queue's page loaders and the words its server action answers
 * with. Reads go through lib/use-cases/reviews/ (list-reviews.ts,
 * get-review.ts; the tables' owner is lib/stores/review-store.ts); this
 * module only shapes them for the pages.
 */

/** More than any queue should ever hold; past it the oldest waiting items still come first. */
const queueLimit = 500;

async function listTab(db: Db, tab: ReviewTab): Promise<ReviewItem[]> {
  const statuses = reviewTabs.find((t) => t.tab === tab)?.statuses ?? "all";
  if (statuses === "all") return listReviews(db, { limit: queueLimit });
  const lists = await Promise.all(statuses.map((status) => listReviews(db, { status, limit: queueLimit })));
  const items = lists.flat();
  // The waiting queue is worked oldest first; decided history reads newest first.
  const oldestFirst = statuses.every((s) => isUndecided(s));
  return items.sort(
    (a, b) => (oldestFirst ? 1 : -1) * (a.createdAt.getTime() - b.createdAt.getTime()) || a.id.localeCompare(b.id),
  );
}

/** Undecided reviews (open or escalated): the number beside "Review queue". */
export async function countWaitingReviews(db: Db): Promise<number> {
  const lists = await Promise.all(undecidedStatuses.map((status) => listReviews(db, { status, limit: queueLimit })));
  return lists.reduce((sum, l) => sum + l.length, 0);
}

function queueToken(tab: ReviewTab, items: ReviewItem[], waitingCount: number): string {
  const parts = items.map(
    (r) => `${r.id}@${r.version}/${r.execution.version}/${r.task?.version ?? "-"}/${r.openAlerts.length}`,
  );
  return createHash("sha256")
    .update(`${tab}|${waitingCount}|${parts.join(",")}`)
    .digest("base64url")
    .slice(0, 22);
}

/** The queue's items as `reader` may see them: each held call's restricted fields masked without clearance. */
export async function loadReviewQueue(db: Db, tab: ReviewTab, reader?: Principal): Promise<ReviewQueueData> {
  const [stored, waitingCount] = await Promise.all([listTab(db, tab), countWaitingReviews(db)]);
  const items = reader
    ? await Promise.all(
        stored.map(async (r) => ({ ...r, execution: (await maskExecutionForReader(db, reader, r.execution)).value })),
      )
    : stored;
  // Only a page render asks the providers (the polled token does not): each row shows the verdict the decision follows.
  const verdicts = reader ? Object.fromEntries(await providerVerdicts(db, items)) : {};
  return { tab, items, waitingCount, verdicts, token: queueToken(tab, items, waitingCount) };
}

/** Same token as the page's, and the count for the navigation badge. */
export async function reviewQueueToken(db: Db, tab: ReviewTab): Promise<{ token: string; openCount: number }> {
  const { token, waitingCount } = await loadReviewQueue(db, tab);
  return { token, openCount: waitingCount };
}

/** Restricted fields of the held call (request, result, evidence) are masked for a `reader` without clearance. */
export async function loadReviewDetail(db: Db, reviewId: string, reader: Principal): Promise<ReviewDetailData | null> {
  const detail = await getReview(db, reviewId);
  if (!detail) return null;
  const { events: storedEvents, ...stored } = detail;
  const execution = await maskExecutionForReader(db, reader, stored.execution);
  const events = await maskExecutionEventsForReader(db, reader, stored.execution, storedEvents);
  const review = { ...stored, execution: execution.value };
  const tool = await toolDefinitionOf(db, review.execution.tool, review.execution.toolVersion ?? null);
  return {
    review,
    events: events.map((e) => e.value),
    maskedFields: [
      ...execution.maskedFields,
      ...events.flatMap((e, i) => e.maskedFields.map((p) => `/events/${i}${p}`)),
    ],
    fourEyesThresholdCents: getEnv().VERITY_FOUR_EYES_THRESHOLD_CENTS,
    compensatingTool: tool?.compensating_tool ?? null,
  };
}

/** Moves with the review, its execution, its task and the task's open alerts: whatever the page shows. */
export function reviewDetailToken(review: ReviewItem): string {
  return `${review.version}.${review.execution.version}.${review.task?.version ?? 0}.${review.openAlerts.length}`;
}

/** Long enough for a healthy provider, short enough that an operator is not left looking at "Asking…". */
const lookupTimeoutMs = 4000;
/** A list asks once per row, all at once: a provider slower than this reads "not asked" in the row, not a slow page. */
const rowLookupTimeoutMs = 1500;

/**
 * The provider's verdict on each undecided review's key, for the queue's and
 * the inbox's rows (the review page asks again, in full, when opened). Asked
 * in parallel; a lookup that fails or times out is null ("not asked").
 */
export async function providerVerdicts(
  db: Db,
  reviews: ReadonlyArray<Pick<ReviewItem, "id" | "executionId" | "status">>,
): Promise<Map<string, ProviderVerdict | null>> {
  const deps = getConnectors();
  const answers = await Promise.all(
    reviews.map(async (r): Promise<[string, ProviderVerdict | null]> => {
      if (!isUndecided(r.status)) return [r.id, null];
      try {
        const row = await getExecutionRowOrThrow(db, r.executionId);
        const lookup = await lookUpEffect(db, row, deps, { timeoutMs: rowLookupTimeoutMs });
        return [r.id, verdictOf(lookup.kind)];
      } catch {
        return [r.id, null];
      }
    }),
  );
  return new Map(answers);
}

function verdictOf(kind: "found" | "not_found" | "unknown"): ProviderVerdict {
  switch (kind) {
    case "found":
      return "FOUND";
    case "not_found":
      return "NOT_FOUND";
    case "unknown":
      return "UNKNOWN";
  }
}

/**
 * What the provider holds under the execution's idempotency key, asked now.
 * Only for undecided reviews: a decided one is history, and its evidence is
 * in the execution's record.
 */
export async function askProvider(db: Db, review: ReviewItem, reader: Principal): Promise<ProviderLookupView> {
  if (!isUndecided(review.status)) {
    return {
      kind: "not_asked",
      why: "The review is decided; the provider's answer at the time is in the execution history below.",
    };
  }
  const deps = getConnectors();
  // A registered tool's provider is its owner's, asked through its reconciliation method (docs/tools.md).
  const provider =
    review.execution.tool === "payments.refund"
      ? deps.payments.provider
      : review.execution.tool === "crm.add_note"
        ? deps.crm.provider
        : `${review.execution.tool}'s owner`;
  try {
    const row = await getExecutionRowOrThrow(db, review.executionId);
    const lookup = await lookUpEffect(db, row, deps, { timeoutMs: lookupTimeoutMs });
    switch (lookup.kind) {
      case "found": {
        // Compared unmasked (a mismatch is a fact about the call), shown masked: the record names the customer too.
        const record = await maskToolPayloadForReader(db, reader, row, "result", lookup.record, "/record");
        const evidence = await maskToolPayloadForReader(db, reader, row, "evidence", lookup.evidence, "/evidence");
        return {
          kind: "found",
          provider,
          record: record.value,
          mismatches: recordMismatches(row, lookup.record),
          evidence: evidence.value,
        };
      }
      case "not_found":
        return { kind: "not_found", provider, evidence: lookup.evidence };
      case "unknown":
        return { kind: "unknown", provider, reason: lookup.reason, message: lookup.message };
    }
  } catch (error) {
    // Connectors do not throw for I/O; this is a tool without a lookup, or a bug. Say so rather than fail the page.
    return {
      kind: "not_asked",
      why: `The provider could not be asked: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** The answer to a decision that was recorded, in words. */
export function describeDecisionOutcome(result: DecideResult, decision: ReviewDecisionKind): DecisionFormState {
  const { review, execution, task } = result;
  const taskNow = task ? ` The task is now ${task.status}.` : "";
  switch (decision) {
    case "escalate":
      return {
        status: "done",
        tone: "info",
        message: "Escalated: the review stays in the queue, flagged for someone more senior. Nothing was sent.",
      };
    case "reject":
      return {
        status: "done",
        tone: "success",
        message: `Rejected: nothing will be sent; the execution is ${execution.status}.${taskNow}`,
      };
    case "approve_accept_evidence":
      return {
        status: "done",
        tone: "success",
        message: `Accepted the provider's evidence: recorded as ${execution.status} without sending anything.${taskNow}`,
      };
    case "approve_compensate":
      return {
        status: "done",
        tone: "success",
        message: `Accepted the provider's evidence (${execution.status}) and recorded its compensation${result.compensation ? `, ${result.compensation.tool} (${result.compensation.id})` : ""}: the task's agent sends it under its own key.${taskNow}`,
      };
    case "approve_execute": {
      if (!result.executed) {
        const state = approvalState(review);
        return {
          status: "done",
          tone: "info",
          message: `Your approval is recorded (${approvalHeadline(state, review.status)}). Nothing was sent yet.`,
        };
      }
      const record =
        execution.result && typeof execution.result === "object"
          ? (execution.result as { id?: unknown }).id
          : undefined;
      switch (result.outcome) {
        case "succeeded":
          return {
            status: "done",
            tone: "success",
            message: `Approved and executed: the provider applied it${typeof record === "string" ? ` (${record})` : ""} under the same idempotency key.${taskNow}`,
          };
        case "failed":
          return {
            status: "done",
            tone: "info",
            message: `Approved and sent, but the provider refused it (${execution.error ?? "no reason given"}). Nothing was applied.${taskNow}`,
          };
        default:
          return {
            status: "done",
            tone: "info",
            message:
              "Approved and sent, but the outcome is unknown again. The review is open again: check what the provider says now before deciding.",
          };
      }
    }
  }
}

function isReviewView(value: unknown): value is ReviewView {
  return (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as ReviewView).decisions) &&
    typeof (value as ReviewView).version === "number"
  );
}

/**
 * What a person who lost a race is told: who decided first and what, or that
 * it was themselves in another window. The engine puts the fresh review in
 * the conflict's details; without it, it is read again.
 */
export async function describeConflict(
  db: Db,
  reviewId: string,
  fresh: unknown,
  viewer: string | undefined,
): Promise<{ headline: string; detail: string | null }> {
  const review: Pick<ReviewView, "status" | "version" | "requiredApprovals" | "round" | "decisions"> | null =
    isReviewView(fresh) ? fresh : await getReview(db, reviewId);
  if (!review) return { headline: "This review no longer exists.", detail: null };
  const latest = [...review.decisions]
    .sort((a, b) => new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime())
    .at(-1);
  const now = `It is now ${reviewStatusInfo[review.status as ReviewStatus].label.toLowerCase()}, ${approvalHeadline(approvalState(review, viewer), review.status)}.`;
  if (!latest)
    return {
      headline: `The review changed since you opened it (now version ${review.version}) — here is the fresh state; nothing was overwritten.`,
      detail: now,
    };
  const what = decisionInfo[latest.kind].past;
  if (latest.actor === viewer) {
    return {
      headline: `You already decided on this review in another window (you ${what}) — here is the fresh state; your second decision was not recorded.`,
      detail: `Nobody decides twice in one round. ${now}`,
    };
  }
  return {
    headline: `Another operator decided first (${shortIdentity(latest.actor)} ${what}) — here is the fresh state; nothing was overwritten.`,
    detail: `Their reason: “${latest.reason}”. ${now}`,
  };
}

/** The review of each of a task's executions, for the task page's ledger. */
export async function reviewsOfTask(
  db: Db,
  taskId: string,
): Promise<Map<string, { id: string; status: ReviewStatus }>> {
  const all = await listReviews(db, { limit: queueLimit });
  return new Map(all.filter((r) => r.taskId === taskId).map((r) => [r.executionId, { id: r.id, status: r.status }]));
}
