import Link from "next/link";
import type { ReactNode } from "react";
import { formatMoney, reviewStatusInfo } from "@/lib/adapters/console/reviews/reviews-format";
import { isUndecided } from "@/lib/adapters/console/reviews/reviews-query";
import type { ReviewItem } from "@/lib/adapters/console/reviews/reviews-view";
import { RelativeTime } from "@/components/relative-time";
import { DetailPageHeader, Fact } from "@/components/detail-page-header";
import { StatusBadge } from "@/components/status-badge";
import { WaitingTime } from "@/components/reviews/waiting-time";

export function reviewTitle(review: ReviewItem): string {
  const money = formatMoney(review.amountCents, review.currency);
  return review.execution.tool === "payments.refund"
    ? `Refund of ${money} to ${review.customerId}`
    : `${review.execution.tool}${review.amountCents === null ? "" : `: ${money}`}${review.customerId ? ` for ${review.customerId}` : ""}`;
}

export function ReviewHeading({ review, live }: { review: ReviewItem; live: ReactNode }) {
  const status = reviewStatusInfo[review.status];
  return (
    <DetailPageHeader
      parent={{ href: "/reviews", label: "Review queue" }}
      id={review.id}
      title={<h1 className="review-title">{reviewTitle(review)}</h1>}
      status={<span className={`badge badge--${status.tone}`}>{status.label.toUpperCase()}</span>}
      version={review.version}
      versionHint="Every decision increments the version; a decision names the version it was made on"
      live={live}
    >
      <Fact term="Task">
        <Link href={`/tasks/${encodeURIComponent(review.taskId)}`} className="mono">
          {review.taskId}
        </Link>{" "}
        {review.task ? (
          <StatusBadge status={review.task.status} def={undefined} />
        ) : (
          <span className="subtle">(no longer exists)</span>
        )}
      </Fact>
      <Fact term={isUndecided(review.status) ? "Waiting" : "Waited"}>
        <WaitingTime waitedMs={review.waitingMs} running={isUndecided(review.status)} />
      </Fact>
      <Fact term="Frozen">
        <RelativeTime value={review.createdAt} />
      </Fact>
      {review.round > 1 ? (
        <Fact term="Round">
          {review.round} <span className="subtle">(reopened after an unknown outcome)</span>
        </Fact>
      ) : null}
      {review.decidedAt ? (
        <Fact term="Decided">
          <RelativeTime value={review.decidedAt} />
        </Fact>
      ) : null}
    </DetailPageHeader>
  );
}
