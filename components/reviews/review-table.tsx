import Link from "next/link";
import {
  approvalHeadline,
  approvalState,
  formatMoney,
  reviewStatusInfo,
} from "@/lib/adapters/console/reviews/reviews-format";
import { isUndecided } from "@/lib/adapters/console/reviews/reviews-query";
import type { ReviewItem } from "@/lib/adapters/console/reviews/reviews-view";
import { StatusBadge } from "@/components/status-badge";
import { ApprovalMeter } from "@/components/reviews/approval-meter";
import { WaitingTime } from "@/components/reviews/waiting-time";
import { TruncatedText } from "@/components/truncated-text";
import { VerdictBadge } from "@/components/reviews/verdict-badge";
import type { ProviderVerdict } from "@/lib/model/inbox/inbox-items";

/** One row per frozen action: the money first, then who, which task, what call, how long, and how far the approvals are. */
export function ReviewTable({
  items,
  viewer,
  showStatus,
  verdicts = {},
}: {
  items: ReviewItem[];
  viewer: string;
  showStatus: boolean;
  /** The provider's verdict per undecided review, when asked. */
  verdicts?: Record<string, ProviderVerdict | null>;
}) {
  return (
    <div className="table-wrap">
      <table className="table review-table">
        <caption className="visually-hidden">Frozen irreversible actions</caption>
        <thead>
          <tr>
            <th scope="col">Amount</th>
            <th scope="col" className="col-p2">
              Customer
            </th>
            <th scope="col" className="col-p2">
              Task
            </th>
            <th scope="col" className="col-p3">
              Intended call
            </th>
            <th scope="col">{showStatus ? "Waited" : "Waiting"}</th>
            <th scope="col" className="col-p2">
              Approvals
            </th>
            <th scope="col">
              <span className="visually-hidden">Open</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((r) => {
            const approvals = approvalState(r, viewer);
            const money = formatMoney(r.amountCents, r.currency);
            const waiting = isUndecided(r.status);
            return (
              <tr key={r.id} className={waiting ? undefined : "review-row--closed"}>
                <th scope="row">
                  <span className="money">{money}</span>
                  {showStatus || r.status === "ESCALATED" ? (
                    <span className={`badge badge--${reviewStatusInfo[r.status].tone} review-row__status`}>
                      {reviewStatusInfo[r.status].label}
                    </span>
                  ) : null}
                  <VerdictBadge verdict={verdicts[r.id]} />
                </th>
                <td className="mono col-p2">{r.customerId ?? "—"}</td>
                <td className="col-p2">
                  <Link href={`/tasks/${encodeURIComponent(r.taskId)}`} className="task-link">
                    <TruncatedText value={r.taskId} className="mono" />
                  </Link>
                  {r.task ? <StatusBadge status={r.task.status} def={undefined} /> : null}
                </td>
                <td className="col-p3">
                  <span className="mono">{r.execution.tool}</span>
                  <span
                    className="mono subtle review-row__key"
                    title="Idempotency key: every attempt of this call uses it"
                  >
                    {r.execution.idempotencyKey}
                  </span>
                </td>
                <td>
                  <WaitingTime waitedMs={r.waitingMs} running={waiting} />
                </td>
                <td className="col-p2">
                  <span className="approvals-cell">
                    <ApprovalMeter state={approvals} />
                    <span>{approvalHeadline(approvals, r.status)}</span>
                  </span>
                  {waiting && approvals.viewerDecided ? (
                    <span className="review-row__you">You decided: {approvals.viewerDecision}</span>
                  ) : null}
                </td>
                <td className="review-row__open">
                  <Link href={`/reviews/${encodeURIComponent(r.id)}`} className="button button--small">
                    {waiting && !approvals.viewerDecided ? "Review" : "View"}
                    <span className="visually-hidden">
                      {" "}
                      the frozen {r.execution.tool} of {money}
                      {r.customerId ? ` for ${r.customerId}` : ""}
                    </span>
                  </Link>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
