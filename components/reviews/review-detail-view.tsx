import { Suspense } from "react";
import { MaskedFieldsNotice } from "@/components/masked-fields-notice";
import type { Principal } from "@/lib/model/permissions";
import { can } from "@/lib/model/permissions";
import Link from "next/link";
import { approvalState, describeDivergenceKind, describeEffect } from "@/lib/adapters/console/reviews/reviews-format";
import type { ProviderVerdict } from "@/lib/model/inbox/inbox-items";
import type { ProviderLookupView, ReviewDetailData } from "@/lib/adapters/console/reviews/reviews-view";
import { LiveRefresh } from "@/components/live-refresh";
import { ExecutionEvents } from "@/components/task/execution-events";
import { ApprovalsCard } from "@/components/reviews/approvals-card";
import { DecisionPanel } from "@/components/reviews/decision-panel";
import { IntendedCallCard } from "@/components/reviews/intended-call-card";
import { ProviderLookup, ProviderLookupPending } from "@/components/reviews/provider-lookup";
import { ReviewHeading } from "@/components/reviews/review-heading";
import { InstructionConflictCard, type ReviewInstructions } from "@/components/instructions/instruction-conflict-card";

/** Why this review may exist at all, and what blocks re-execution: the task's open divergence alerts. */
function OpenAlertsNotice({ review }: { review: ReviewDetailData["review"] }) {
  return (
    <section className="notice notice--error alerts-notice" aria-labelledby="alerts-heading">
      <h2 id="alerts-heading" className="notice__title">
        {review.openAlerts.length === 1
          ? "An open divergence alert on this task"
          : `${review.openAlerts.length} open divergence alerts on this task`}
      </h2>
      <ul>
        {review.openAlerts.map((a) => (
          <li key={a.id}>
            <strong>{describeDivergenceKind(a.kind)}</strong> ({a.severity}): {a.message}
          </li>
        ))}
      </ul>
      <p>
        Approve &amp; execute is refused until it is resolved.{" "}
        <Link href={`/tasks/${encodeURIComponent(review.taskId)}`}>See both sides and resolve it on the task page</Link>
        .
      </p>
    </section>
  );
}

export function ReviewDetailView({
  data,
  principal,
  lookup,
  token,
  instructions = null,
}: {
  data: ReviewDetailData;
  principal: Principal;
  lookup: Promise<ProviderLookupView>;
  token: string;
  /** The instructions behind the action (relied on, superseding), when its topic has any. */
  instructions?: ReviewInstructions | null;
}) {
  const { review } = data;
  const approvals = approvalState(review, principal.identity);
  // The provider's answer as the verdict the panel's buttons follow, streamed to it (the panel does not wait).
  const verdict = lookup.then((answer): ProviderVerdict | null =>
    answer.kind === "found" ? "FOUND" : answer.kind === "not_found" ? "NOT_FOUND" : null,
  );
  const decisionPanel = (
    <DecisionPanel
      verdict={verdict}
      effect={describeEffect(review.execution.tool, review.amountCents, review.currency)}
      key={review.id}
      reviewId={review.id}
      version={review.version}
      status={review.status}
      round={review.round}
      viewerDecision={approvals.viewerDecision}
      requiredApprovals={review.requiredApprovals}
      approvalsGiven={approvals.approvers.length}
      idempotencyKey={review.execution.idempotencyKey}
      neverSent={instructions?.neverSent === true && instructions.frozenByGuard}
      compensatingTool={data.compensatingTool}
      executeBlockedBy={
        review.openAlerts.length
          ? `the task has ${review.openAlerts.length === 1 ? "an open divergence alert" : `${review.openAlerts.length} open divergence alerts`}; nothing irreversible proceeds until it is resolved on the task page.`
          : null
      }
    />
  );
  const live = (
    <LiveRefresh
      url={`/api/console/reviews/${encodeURIComponent(review.id)}/version`}
      token={token}
      topic={{ kinds: ["review"], about: review.id }}
      what="review"
    />
  );
  return (
    <>
      <ReviewHeading review={review} live={live} />
      <div className="detail-grid">
        <div className="detail-main">
          <MaskedFieldsNotice fields={data.maskedFields} />
          {review.openAlerts.length ? <OpenAlertsNotice review={review} /> : null}
          {instructions ? <InstructionConflictCard instructions={instructions} /> : null}
          {/* The provider's answer first: it is what the decision follows. */}
          <Suspense fallback={<ProviderLookupPending />}>
            <ProviderLookup lookup={lookup} />
          </Suspense>
          <IntendedCallCard
            review={review}
            sentTimes={data.events.filter((e) => e.toStatus === "SENT").map((e) => e.createdAt)}
          />
          <section className="card" aria-labelledby="history-heading">
            <h2 id="history-heading">Execution history</h2>
            <ExecutionEvents events={data.events} />
          </section>
        </div>
        <div className="detail-side">
          <ApprovalsCard review={review} viewer={principal.identity} thresholdCents={data.fourEyesThresholdCents} />
          {can(principal, "tasks:transition") ? (
            decisionPanel
          ) : (
            <section className="card card--quiet" aria-labelledby="readonly-heading">
              <h2 id="readonly-heading">Read-only</h2>
              <p>
                Your role (<strong>{principal.role}</strong>) can see this review, the provider&apos;s answer and every
                decision, but cannot decide. Decisions need the tasks:transition permission.
              </p>
            </section>
          )}
        </div>
      </div>
    </>
  );
}
