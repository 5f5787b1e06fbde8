"use client";

import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { matchesTopic, type LiveChange, type LiveTopic } from "@/lib/model/live/change-events";

/**
 * The page's one stream of change events (`/api/console/events`,
 * docs/live-updates.md), shared by every live part of it: the live refresh
 * of the page and the navigation's badges. Mounted by the signed-in shell,
 * so it lives across client navigations.
 *
 * - `connecting`: the page's first stream is being opened (a moment after
 *   the page shows): parts neither poll nor wait; the stream's first status
 *   makes every part read its state once.
 * - `live`: the stream is open and the server is listening: parts wait for
 *   events and do not poll.
 * - `down`: reconnecting, refused, or the server's listener is lost: parts
 *   poll as they did before the stream.
 * - `off`: the stream is open but the database announces nothing (the
 *   operators turned live updates off, VERITY_LIVE_UPDATES=off): parts poll,
 *   and say that this is on purpose.
 * - `ended`: the server ended the stream because the session ended.
 */
export type LiveStatus = "connecting" | "live" | "down" | "off" | "ended";

/** Whether a live part polls: only while no event can come (never while the first stream opens, nor after the session ended). */
export function isPolling(status: LiveStatus): boolean {
  return status === "down" || status === "off";
}

interface Follower {
  topic: LiveTopic;
  /** A change of the topic; null after a gap (the stream came back): read afresh. */
  onChange(change: LiveChange | null): void;
}

interface LiveEvents {
  status: LiveStatus;
  endedDetail: string | null;
  follow(follower: Follower): () => void;
}

const LiveEventsContext = createContext<LiveEvents | null>(null);

/** How long a closed stream (a refused or broken response) waits before it is opened again. */
const reopenAfterMs = 10_000;

export function LiveEventsProvider({ enabled, children }: { enabled: boolean; children: ReactNode }) {
  const [status, setStatus] = useState<LiveStatus>(enabled ? "connecting" : "down");
  const [endedDetail, setEndedDetail] = useState<string | null>(null);
  const followers = useRef(new Set<Follower>());

  useEffect(() => {
    if (!enabled || typeof EventSource === "undefined") return;
    let source: EventSource | null = null;
    let reopen: ReturnType<typeof setTimeout> | null = null;
    let stopped = false;
    const open = () => {
      reopen = null;
      const s = new EventSource("/api/console/events");
      source = s;
      s.addEventListener("status", (event) => {
        const data = JSON.parse((event as MessageEvent<string>).data) as { live?: unknown; off?: unknown };
        const live = data.live === true;
        setStatus(live ? "live" : data.off === true ? "off" : "down");
        // Whatever changed while no event could arrive (before this stream opened, or while the
        // server's listener was lost) is read afresh by every follower.
        if (live) for (const f of followers.current) f.onChange(null);
      });
      s.addEventListener("change", (event) => {
        const change = JSON.parse((event as MessageEvent<string>).data) as LiveChange;
        for (const f of followers.current) if (matchesTopic(f.topic, change)) f.onChange(change);
      });
      s.addEventListener("ended", (event) => {
        const { detail } = JSON.parse((event as MessageEvent<string>).data) as { detail?: unknown };
        s.close();
        setEndedDetail(typeof detail === "string" ? detail : "Your session has ended.");
        setStatus("ended");
      });
      s.onerror = () => {
        // A dropped connection is retried by the EventSource itself; a refused one (a 401, a
        // server without the route) closes it for good: poll meanwhile and try again later.
        setStatus((now) => (now === "ended" ? now : "down"));
        if (s.readyState === EventSource.CLOSED && !stopped) reopen = setTimeout(open, reopenAfterMs);
      };
    };
    open();
    return () => {
      stopped = true;
      if (reopen) clearTimeout(reopen);
      (source as EventSource | null)?.close();
    };
  }, [enabled]);

  const follow = useCallback((follower: Follower) => {
    followers.current.add(follower);
    return () => void followers.current.delete(follower);
  }, []);
  const value = useMemo<LiveEvents>(() => ({ status, endedDetail, follow }), [status, endedDetail, follow]);
  return <LiveEventsContext.Provider value={value}>{children}</LiveEventsContext.Provider>;
}

// The page's own server actions in flight. An action's answer brings its own refresh of the page;
// a live refresh started meanwhile would be entangled with it (React commits both transitions
// together), so a change heard then is followed up only once the actions have answered.
let ownActions = 0;
const afterOwnActions = new Set<() => void>();

/** A server action of this page started (components/server-action-form.tsx); call what it returns when it answered. */
export function ownActionStarted(): () => void {
  ownActions++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    ownActions--;
    if (ownActions > 0) return;
    const waiting = [...afterOwnActions];
    afterOwnActions.clear();
    for (const run of waiting) run();
  };
}

function whenNoOwnAction(run: () => void): void {
  if (ownActions === 0) run();
  else afterOwnActions.add(run);
}

/**
 * Follows a topic on the page's stream: `onChange` runs `debounceMs` after
 * the last of a burst of matching changes (a transition moves a task, its
 * execution and its review at once), and after a gap in the stream. A
 * burst that never pauses still runs it once every `maxWaitMs`: without
 * that bound, an agent changing a task more often than every `debounceMs`
 * kept each event putting the run off, and the page showed nothing new
 * until the agent stopped (a page of aggregates sets a longer bound, so it
 * reads no more often than its old poll). Returns the
 * stream's status; outside the signed-in shell it is always `down`, and
 * the caller polls.
 */
export function useLiveTopic(
  topic: LiveTopic,
  onChange: () => void,
  debounceMs = 150,
  maxWaitMs = 1000,
): { status: LiveStatus; endedDetail: string | null } {
  const live = useContext(LiveEventsContext);
  const callback = useRef(onChange);
  useEffect(() => {
    callback.current = onChange;
  });
  const follow = live?.follow;
  // Topics are written inline by their pages: follow by value, not by identity.
  const key = JSON.stringify(topic);
  useEffect(() => {
    if (!follow) return;
    const followed = JSON.parse(key) as LiveTopic;
    let timer: ReturnType<typeof setTimeout> | null = null;
    // When the pending burst began: with maxWaitMs, the run is never put off past it.
    let burstSince = 0;
    const unfollow = follow({
      topic: followed,
      onChange: () => {
        const now = Date.now();
        if (timer) clearTimeout(timer);
        else burstSince = now;
        const wait = Math.min(debounceMs, burstSince + maxWaitMs - now);
        timer = setTimeout(
          () => {
            timer = null;
            whenNoOwnAction(() => callback.current());
          },
          Math.max(0, wait),
        );
      },
    });
    return () => {
      if (timer) clearTimeout(timer);
      unfollow();
    };
  }, [follow, key, debounceMs, maxWaitMs]);
  return { status: live?.status ?? "down", endedDetail: live?.endedDetail ?? null };
}
