import type { ReviewStatus } from "@/lib/generated/prisma/enums";

/**
 * The queue's URL is its state: `?status=` picks the tab, so a tab can be
 * bookmarked and reloaded. "waiting" is the work: open reviews and escalated
 * ones (escalated reviews stay undecided, flagged for someone more senior).
 */
export type ReviewTab = "WAITING" | "ESCALATED" | "APPROVED" | "REJECTED" | "ALL";

export const reviewTabs: ReadonlyArray<{ tab: ReviewTab; label: string; statuses: readonly ReviewStatus[] | "all" }> = [
  { tab: "WAITING", label: "Waiting", statuses: ["OPEN", "ESCALATED"] },
  { tab: "ESCALATED", label: "Escalated", statuses: ["ESCALATED"] },
  { tab: "APPROVED", label: "Approved", statuses: ["APPROVED"] },
  { tab: "REJECTED", label: "Rejected", statuses: ["REJECTED"] },
  { tab: "ALL", label: "All", statuses: "all" },
];

/** Still in people's hands: decisions can be taken. */
export const undecidedStatuses: readonly ReviewStatus[] = ["OPEN", "ESCALATED"];

export function isUndecided(status: ReviewStatus): boolean {
  return undecidedStatuses.includes(status);
}

/** Anything unknown falls back to the waiting queue rather than failing the page. */
export function parseReviewTab(value: string | string[] | null | undefined): ReviewTab {
  const raw = (Array.isArray(value) ? value[0] : value)?.toUpperCase();
  return reviewTabs.find((t) => t.tab === raw)?.tab ?? "WAITING";
}

export function reviewListHref(tab: ReviewTab): string {
  return tab === "WAITING" ? "/reviews" : `/reviews?status=${tab.toLowerCase()}`;
}
