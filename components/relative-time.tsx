"use client";

import { useSyncExternalStore } from "react";
import { formatDateTime, formatRelativeTime } from "@/lib/adapters/console/shared/format";

/**
 * One clock for every relative time on the page, ticking every 15 s while
 * someone is subscribed: "12 min ago" keeps growing on a page left open all
 * day, and a hundred rows share one timer, not a hundred.
 */
const tickMs = 15_000;
let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    // The first subscriber after a quiet spell (a client-side navigation later in the day) starts from now;
    // React reads the snapshot again once subscribed and re-renders if it moved.
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, tickMs);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const getSnapshot = () => now;
// On the server every render is a request of its own: relative to that request's moment.
const getServerSnapshot = () => (typeof window === "undefined" ? Date.now() : now);

/**
 * A moment as "12 min ago", with the exact time in UTC in the tooltip and in
 * the accessible text (screen readers get both; a title alone is not read
 * reliably). The console's one way to show when something happened.
 *
 * The server renders relative to the request and the browser to its own
 * clock: the words may differ by a tick at hydration, which is expected, so
 * React keeps the server's until the next tick instead of warning.
 */
export function RelativeTime({ value }: { value: Date | string }) {
  const date = typeof value === "string" ? new Date(value) : value;
  const current = useSyncExternalStore(subscribe, getSnapshot, getServerSnapshot);
  const exact = formatDateTime(date);
  return (
    <time dateTime={date.toISOString()} title={exact} className="relative-time" suppressHydrationWarning>
      {formatRelativeTime(date, new Date(current))}
      <span className="visually-hidden"> ({exact})</span>
    </time>
  );
}
