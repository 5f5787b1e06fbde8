import {
  approvalHeadline,
  approvalState,
  decisionInfo,
  decisionRounds,
  formatMoney,
  reviewStatusInfo,
} from "@/lib/adapters/console/reviews/reviews-format";
import type { ReviewItem } from "@/lib/adapters/console/reviews/reviews-view";
import { isUndecided } from "@/lib/adapters/console/reviews/reviews-query";
import { RelativeTime } from "@/components/relative-time";
import { Identity } from "@/components/identity";
import { ApprovalMeter } from "@/components/reviews/approval-meter";

type Decision = ReviewItem["decisions"][number];

function DecisionList({ decisions, viewer, label }: { decisions: Decision[]; viewer: string; label: string }) {
  return (
    <ol className="decisions" aria-label={label}>
      {decisions.map((d) => (
        <li key={d.id} className={`decision decision--${decisionInfo[d.kind].approval ? "approval" : d.kind}`}>
          <p className="decision__head">
            <Identity value={d.actor} /> <strong>{decisionInfo[d.kind].past}</strong>
            {d.actor === viewer ? <span className="tag">you</span> : null}
          </p>
          <p className="decision__meta">
            <RelativeTime value={d.createdAt} />
          </p>
          <p className="decision__reason">“{d.reason}”</p>
        </li>
      ))}
    </ol>
  );
}

/**
 * Every decision, by round once the review has reopened: the current round
 * first (it is what counts), then the earlier ones, each saying why it did
 * not settle the review.
 */
function DecisionRounds({ review, viewer }: { review: ReviewItem; viewer: string }) {
  const rounds = decisionRounds(review);
  if (rounds.length === 1) {
    return review.decisions.length ? (
      <DecisionList decisions={review.decisions} viewer={viewer} label="Decisions so far" />
    ) : (
      <p className="subtle">No decisions yet.</p>
    );
  }
  return (
    <div className="decision-rounds">
      {rounds.map((r) => (
        <section
          key={r.round}
          className={r.current ? "decision-round decision-round--current" : "decision-round"}
          aria-labelledby={`round-${r.round}-heading`}
        >
          <h3 id={`round-${r.round}-heading`}>
            Round {r.round}
            {r.current ? " (current)" : ""}
          </h3>
          <p className="hint">{r.note}</p>
          {r.decisions.length ? (
            <DecisionList decisions={r.decisions} viewer={viewer} label={`Decisions in round ${r.round}`} />
          ) : (
            <p className="subtle">{r.current ? "No decisions in this round yet." : "No decisions in this round."}</p>
          )}
        </section>
      ))}
    </div>
  );
}

/** Four-eyes at a glance: how many approvals it needs, who gave them, and every decision with its reason. */
export function ApprovalsCard({
  review,
  viewer,
  thresholdCents,
}: {
  review: ReviewItem;
  viewer: string;
  thresholdCents: number;
}) {
  const state = approvalState(review, viewer);
  const threshold = formatMoney(thresholdCents, review.currency ?? "usd");
  const pending = isUndecided(review.status) && state.approvers.length > 0 && state.approvers.length < state.required;
  return (
    <section className="card" aria-labelledby="approvals-heading">
      <h2 id="approvals-heading">Approvals</h2>
      <p
        className={pending ? "approvals-headline approvals-headline--pending" : "approvals-headline"}
        data-testid="approvals-headline"
      >
        <ApprovalMeter state={state} />
        <span>
          {isUndecided(review.status)
            ? approvalHeadline(state, review.status)
            : `${reviewStatusInfo[review.status].label} · ${state.summary}`}
        </span>
      </p>
      <p className="approvals-detail">{state.detail}</p>
      <p className="hint">
        {state.required > 1
          ? `Four-eyes: re-executing ${threshold} or more needs ${state.required} approvals from different people; the first keeps the review open.`
          : `Below the four-eyes threshold (${threshold}): one approval re-executes it.`}
        {review.round > 1 ? ` Only round ${review.round}'s decisions count now.` : ""}
      </p>
      <DecisionRounds review={review} viewer={viewer} />
    </section>
  );
}
