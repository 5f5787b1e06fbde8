"use client";

import { useEffect, useState } from "react";
import { longWaitMs } from "@/lib/adapters/console/reviews/reviews-format";
import { formatDuration } from "@/lib/core/format-duration";

/**
 * How long a review has waited, ticking while the page is open. It starts
 * from the server's figure (so the first render matches the HTML) and adds
 * the time since the page arrived; a live refresh brings a new server figure.
 */
export function WaitingTime({ waitedMs, running }: { waitedMs: number; running: boolean }) {
  // The ticks belong to the server figure they count from: a new figure starts from zero again.
  const [tick, setTick] = useState({ base: waitedMs, extra: 0 });
  useEffect(() => {
    if (!running) return;
    const arrived = Date.now();
    const timer = setInterval(() => setTick({ base: waitedMs, extra: Date.now() - arrived }), 15_000);
    return () => clearInterval(timer);
  }, [waitedMs, running]);
  const extra = running && tick.base === waitedMs ? tick.extra : 0;
  const total = waitedMs + extra;
  const long = running && total >= longWaitMs;
  return (
    <span
      className={long ? "waited waited--long" : "waited"}
      title={long ? "Waiting for more than an hour" : undefined}
    >
      {formatDuration(total)}
      {long ? <span className="visually-hidden"> (long wait)</span> : null}
    </span>
  );
}
