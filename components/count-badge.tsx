"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";
import type { LiveTopic } from "@/lib/model/live/change-events";
import { isPolling, useLiveTopic } from "@/components/live/live-events";

/**
 * The numbers beside "Review queue" and "Inbox" on every page: rendered by
 * the server with the page, then asked again when the page's stream brings
 * a change that may move them (docs/live-updates.md), polled every 10 s only
 * while the stream is down, and asked at once after the person's own
 * decision (useRefreshWaitingCounts).
 */
const badges = {
  reviews: {
    queryKey: ["review-open-count"],
    url: "/api/console/reviews/latest?status=OPEN",
    field: "openCount",
    topic: { kinds: ["review"] },
    testId: "review-count",
    words: (n: number) => (n === 0 ? "none open" : `${n} open`),
  },
  inbox: {
    queryKey: ["inbox-count"],
    url: "/api/console/inbox/count",
    field: "total",
    // What the inbox gathers (lib/use-cases/inbox/): frozen actions, escalated tasks and their gates, alerts, claims.
    topic: { kinds: ["review", "task", "alert", "inbox_claim"] },
    testId: "inbox-count",
    words: (n: number) => (n === 0 ? "nothing waiting" : `${n} waiting`),
  },
} as const satisfies Record<
  string,
  {
    queryKey: readonly string[];
    url: string;
    field: string;
    topic: LiveTopic;
    testId: string;
    words(n: number): string;
  }
>;

export type CountBadgeKind = keyof typeof badges;

const pollMs = 10_000;

export function CountBadge({ kind, initialCount }: { kind: CountBadgeKind; initialCount: number }) {
  const badge = badges[kind];
  const client = useQueryClient();
  // The inbox is gathered from several tables: one ask after a burst of changes, not one per row.
  const stream = useLiveTopic(badge.topic, () => void client.invalidateQueries({ queryKey: badge.queryKey }), 400);
  const query = useQuery({
    queryKey: badge.queryKey,
    queryFn: async () => {
      const body = await fetchConsoleJson<Record<string, unknown>>(badge.url);
      const count = body[badge.field];
      if (typeof count !== "number") throw new Error("unexpected answer");
      return count;
    },
    initialData: initialCount,
    initialDataUpdatedAt: () => Date.now(),
    refetchInterval: isPolling(stream.status) ? pollMs : false,
    staleTime: 5_000,
    retry: false,
  });
  // A failed ask keeps the last known number rather than hiding the count.
  const count = query.data;
  return (
    <>
      <span
        className={count === 0 ? "count-badge count-badge--zero" : "count-badge"}
        aria-hidden="true"
        data-testid={badge.testId}
      >
        {count}
      </span>
      <span className="visually-hidden">, {badge.words(count)}</span>
    </>
  );
}

/** After a person's own decision (a review, a gate, an alert): ask for the badges' numbers now. */
export function useRefreshWaitingCounts(): () => void {
  const client = useQueryClient();
  return () => {
    for (const badge of Object.values(badges)) void client.invalidateQueries({ queryKey: badge.queryKey });
  };
}
