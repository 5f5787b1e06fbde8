import Link from "next/link";
import type { ReactNode } from "react";
import { formatMoney, reviewStatusInfo } from "@/lib/console/reviews-format";
import { isUndecided } from "@/lib/console/reviews-query";
import type { ReviewItem } from "@/lib/console/reviews-view";
import { DateTime } from "@/components/date-time";
import { StatusBadge } from "@/components/status-badge";
import { WaitingTime } from "@/components/reviews/waiting-time";

export function reviewTitle(review: ReviewItem): string {
  const money = formatMoney(review.amountCents, review.currency);
  return review.execution.tool === "payments.refund" ? `Refund of ${money} to ${review.customerId}` : `${review.execution.tool}: ${money} for ${review.customerId}`;
}

export function ReviewHeading({ review, live }: { review: ReviewItem; live: ReactNode }) {
  const status = reviewStatusInfo[review.status];
  return (
    <header className="page-header">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          <li>
            <Link href="/reviews">Review queue</Link>
          </li>
          <li aria-current="page" className="mono">
            {review.id}
          </li>
        </ol>
      </nav>
      <div className="page-header__row">
        <h1 className="review-title">{reviewTitle(review)}</h1>
        <div className="task-title__status">
          <span className={`badge badge--${status.tone}`}>{status.label.toUpperCase()}</span>
          <span className="version-pill" title="Every decision increments the version; a decision names the version it was made on">
            version {review.version}
          </span>
        </div>
        <div className="page-header__aside">{live}</div>
      </div>
      <dl className="facts facts--inline">
        <div>
          <dt>Task</dt>
          <dd>
            <Link href={`/tasks/${encodeURIComponent(review.taskId)}`} className="mono">
              {review.taskId}
            </Link>{" "}
            {review.task ? <StatusBadge status={review.task.status} def={undefined} /> : <span className="subtle">(no longer exists)</span>}
          </dd>
        </div>
        <div>
          <dt>{isUndecided(review.status) ? "Waiting" : "Waited"}</dt>
          <dd>
            <WaitingTime waitedMs={review.waitingMs} running={isUndecided(review.status)} />
          </dd>
        </div>
        <div>
          <dt>Frozen</dt>
          <dd>
            <DateTime value={review.createdAt} />
          </dd>
        </div>
        {review.decidedAt ? (
          <div>
            <dt>Decided</dt>
            <dd>
              <DateTime value={review.decidedAt} />
            </dd>
          </div>
        ) : null}
      </dl>
    </header>
  );
}
