import type { ExecutionStatus } from "@/lib/model/executions/execution-rules";
import type { ReviewListItem } from "@/lib/use-cases/reviews/review-views";
import type { ReviewTab } from "@/lib/adapters/console/reviews/reviews-query";
import type { ProviderVerdict } from "@/lib/model/inbox/inbox-items";

/** What the console shows of reviews: the engine's list items, plus what the pages add around them. */
export type ReviewItem = ReviewListItem;

export interface ExecutionEventView {
  id: string;
  attemptId: string;
  fromStatus: ExecutionStatus | null;
  toStatus: ExecutionStatus;
  actor: string;
  reason: string | null;
  evidence: unknown;
  createdAt: Date;
}

export interface ReviewDetailData {
  review: ReviewItem;
  /** Oldest first. */
  events: ExecutionEventView[];
  /** The four-eyes threshold in force, for the explanation. */
  fourEyesThresholdCents: number;
  /** The tool that undoes this call's effect (its tool version's compensating_tool), or null: no "accept & compensate". */
  compensatingTool: string | null;
  /** The pointers shown as "[restricted]" because the reader has no clearance. */
  maskedFields: string[];
}

/** What the provider says now, asked when the page renders. */
export type ProviderLookupView =
  | {
      kind: "found";
      provider: string;
      /** The provider's record, in the vocabulary of the tool's request (amount_cents, customer_id, …). */
      record: Record<string, unknown> & { id: string };
      /** Fields where the record differs from what Verity asked for. */
      mismatches: string[];
      evidence: unknown;
    }
  | { kind: "not_found"; provider: string; evidence: unknown }
  | { kind: "unknown"; provider: string; reason: string; message: string }
  | { kind: "not_asked"; why: string };

export interface ReviewQueueData {
  tab: ReviewTab;
  items: ReviewItem[];
  /** Undecided reviews (open or escalated): the queue's length, whatever the tab. */
  waitingCount: number;
  /** What the provider says of each undecided review's key, asked when the page rendered (null: not asked or no answer). */
  verdicts: Record<string, ProviderVerdict | null>;
  /** Changes whenever a review in the list changes: the live refresh compares it. */
  token: string;
}
