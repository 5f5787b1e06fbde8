"use client";

import { useQuery } from "@tanstack/react-query";
import { fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";

async function fetchOpenCount(): Promise<number> {
  const body = await fetchConsoleJson<{ openCount?: unknown }>("/api/console/reviews/latest?status=OPEN");
  if (typeof body.openCount !== "number") throw new Error("unexpected answer");
  return body.openCount;
}

/**
 * The number of frozen actions waiting, beside "Review queue" on every page.
 * Seeded by the server render, then polled (paused while the tab is hidden)
 * so a refund frozen while someone reads a task page still shows up.
 */
export function ReviewQueueBadge({ initialCount }: { initialCount: number }) {
  const query = useQuery({
    queryKey: ["review-open-count"],
    queryFn: fetchOpenCount,
    initialData: initialCount,
    initialDataUpdatedAt: () => Date.now(),
    refetchInterval: 10_000,
    staleTime: 5_000,
    retry: false,
  });
  // A failed poll keeps the last known number rather than hiding the queue's length.
  const count = query.data;
  return (
    <>
      <span
        className={count === 0 ? "count-badge count-badge--zero" : "count-badge"}
        aria-hidden="true"
        data-testid="review-count"
      >
        {count}
      </span>
      <span className="visually-hidden">, {count === 0 ? "none open" : `${count} open`}</span>
    </>
  );
}
