import Link from "next/link";
import { reviewListHref, reviewTabs, type ReviewTab } from "@/lib/adapters/console/reviews/reviews-query";

/** The work first (open and escalated), then what was decided. The waiting count is always shown: it is the queue's length. */
export function ReviewStatusTabs({ current, waitingCount }: { current: ReviewTab; waitingCount: number }) {
  return (
    <nav aria-label="Reviews by status" className="review-tabs">
      <ul>
        {reviewTabs.map((tab) => (
          <li key={tab.tab}>
            <Link href={reviewListHref(tab.tab)} aria-current={tab.tab === current ? "page" : undefined}>
              {tab.label}
              {tab.tab === "WAITING" ? <span className="count-badge">{waitingCount}</span> : null}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
