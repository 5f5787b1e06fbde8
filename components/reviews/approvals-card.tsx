import { approvalHeadline, approvalState, decisionInfo, formatMoney, reviewStatusInfo } from "@/lib/console/reviews-format";
import type { ReviewItem } from "@/lib/console/reviews-view";
import { isUndecided } from "@/lib/console/reviews-query";
import { DateTime } from "@/components/date-time";
import { Identity } from "@/components/identity";
import { ApprovalMeter } from "@/components/reviews/approval-meter";

/** Four-eyes at a glance: how many approvals it needs, who gave them, and every decision with its reason. */
export function ApprovalsCard({ review, viewer, thresholdCents }: { review: ReviewItem; viewer: string; thresholdCents: number }) {
  const state = approvalState(review, viewer);
  const threshold = formatMoney(thresholdCents, review.currency);
  const pending = isUndecided(review.status) && state.approvers.length > 0 && state.approvers.length < state.required;
  return (
    <section className="card" aria-labelledby="approvals-heading">
      <h2 id="approvals-heading">Approvals</h2>
      <p className={pending ? "approvals-headline approvals-headline--pending" : "approvals-headline"} data-testid="approvals-headline">
        <ApprovalMeter state={state} />
        <span>{isUndecided(review.status) ? approvalHeadline(state, review.status) : `${reviewStatusInfo[review.status].label} · ${state.summary}`}</span>
      </p>
      <p className="approvals-detail">{state.detail}</p>
      <p className="hint">
        {state.required > 1
          ? `Four-eyes: re-executing ${threshold} or more needs ${state.required} approvals from different people; the first keeps the review open.`
          : `Below the four-eyes threshold (${threshold}): one approval re-executes it.`}
      </p>
      {review.decisions.length ? (
        <ol className="decisions" aria-label="Decisions so far">
          {review.decisions.map((d) => (
            <li key={d.id} className={`decision decision--${decisionInfo[d.kind].approval ? "approval" : d.kind}`}>
              <p className="decision__head">
                <Identity value={d.actor} /> <strong>{decisionInfo[d.kind].past}</strong>
                {d.actor === viewer ? <span className="tag">you</span> : null}
              </p>
              <p className="decision__meta">
                <DateTime value={d.createdAt} />
              </p>
              <p className="decision__reason">“{d.reason}”</p>
            </li>
          ))}
        </ol>
      ) : (
        <p className="subtle">No decisions yet.</p>
      )}
    </section>
  );
}
