import Link from "next/link";
import type { Principal } from "@/lib/model/permissions";
import { can } from "@/lib/model/permissions";
import { reviewListHref, reviewTabs } from "@/lib/adapters/console/reviews/reviews-query";
import type { ReviewQueueData } from "@/lib/adapters/console/reviews/reviews-view";
import { EmptyState } from "@/components/empty-state";
import { LiveRefresh } from "@/components/live-refresh";
import { ReviewStatusTabs } from "@/components/reviews/review-status-tabs";
import { ReviewTable } from "@/components/reviews/review-table";

export function ReviewQueueView({ data, principal }: { data: ReviewQueueData; principal: Principal }) {
  const tabLabel = reviewTabs.find((t) => t.tab === data.tab)?.label.toLowerCase() ?? "";
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Review queue</h1>
          <div className="page-header__aside">
            <LiveRefresh
              url={`/api/console/reviews/latest?status=${data.tab.toLowerCase()}`}
              token={data.token}
              topic={{ kinds: ["review"] }}
              what="review queue"
            />
          </div>
        </div>
        <p className="lede">
          Irreversible actions whose outcome Verity could not establish. Each is frozen: nothing is sent again until
          operators decide here, and every decision is recorded with its reason.
        </p>
      </header>
      {can(principal, "tasks:transition") ? null : (
        <p className="notice notice--info" role="note">
          Read-only: your role (<strong>{principal.role}</strong>) can see the queue and every decision, but cannot
          decide. Deciding needs the tasks:transition permission.
        </p>
      )}
      <ReviewStatusTabs current={data.tab} waitingCount={data.waitingCount} />
      {data.items.length === 0 ? (
        data.tab === "WAITING" ? (
          <EmptyState title="No frozen actions">
            <p>Irreversible actions whose outcome is unknown land here.</p>
            <p className="hint">
              When a refund times out and the provider still cannot say whether it happened, Verity freezes it instead
              of retrying, and asks you. <Link href={reviewListHref("ALL")}>See past decisions</Link>.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title={`No ${tabLabel} reviews`}>
            <p>
              Nothing here yet. <Link href={reviewListHref("WAITING")}>Back to the waiting queue</Link>.
            </p>
          </EmptyState>
        )
      ) : (
        <ReviewTable
          items={data.items}
          viewer={principal.identity}
          showStatus={data.tab !== "WAITING"}
          verdicts={data.verdicts}
        />
      )}
    </>
  );
}
