"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";

/** The react-query key of the inbox's total: a decision invalidates it (useRefreshWaitingCounts) for an at-once badge. */
const inboxCountKey = ["inbox-count"] as const;
/** The review queue badge's key (components/reviews/review-queue-badge.tsx). */
const reviewCountKey = ["review-open-count"] as const;

async function fetchInboxTotal(): Promise<number> {
  const body = await fetchConsoleJson<{ total?: unknown }>("/api/console/inbox/count");
  if (typeof body.total !== "number") throw new Error("unexpected answer");
  return body.total;
}

/**
 * After a person's own decision (a review, a gate, an alert): ask for the
 * badges' numbers now instead of at the next 10 s poll.
 */
export function useRefreshWaitingCounts(): () => void {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: inboxCountKey });
    void client.invalidateQueries({ queryKey: reviewCountKey });
  };
}

/**
 * The inbox's total beside "Inbox" on every page: asked once the page is
 * up, then polled (paused while the tab is hidden), and at once after the
 * person's own decision.
 */
export function InboxBadge() {
  const query = useQuery({
    queryKey: inboxCountKey,
    queryFn: fetchInboxTotal,
    refetchInterval: 10_000,
    staleTime: 5_000,
    retry: false,
  });
  const count = query.data;
  if (count === undefined) return null;
  return (
    <>
      <span
        className={count === 0 ? "count-badge count-badge--zero" : "count-badge"}
        aria-hidden="true"
        data-testid="inbox-count"
      >
        {count}
      </span>
      <span className="visually-hidden">, {count === 0 ? "nothing waiting" : `${count} waiting`}</span>
    </>
  );
}
