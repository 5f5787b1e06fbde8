"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition } from "react";
import { ConsoleRouteError, fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";
import type { LiveTopic } from "@/lib/model/live/change-events";
import { isPolling, useLiveTopic } from "@/components/live/live-events";

async function fetchToken(url: string): Promise<string> {
  const body = await fetchConsoleJson<{ token?: unknown }>(url);
  if (typeof body.token !== "string") throw new Error("unexpected answer");
  return body.token;
}

/**
 * Keeps a server-rendered page current: when the page's stream
 * (components/live/live-events.tsx) brings a change of `topic`, asks `url`
 * for the change token and, when it differs from the one the page was
 * rendered with, asks the router for a fresh render. While the stream is
 * down it polls `url` every `intervalMs` instead, as before the stream
 * (docs/live-updates.md). Client state (a half-typed reason) survives a
 * refresh. Polling pauses while the tab is hidden.
 */
export function LiveRefresh({
  url,
  token,
  topic,
  intervalMs = 3000,
  what,
}: {
  url: string;
  token: string;
  /** The changes that may move this page's token. */
  topic: LiveTopic;
  intervalMs?: number;
  what: string;
}) {
  const router = useRouter();
  const [refreshing, startRefresh] = useTransition();
  const [updatedAt, setUpdatedAt] = useState<Date | null>(null);
  // A refreshed render brings a new token: that is when the page was updated
  // (state adjusted while rendering, as React recommends, not in an effect).
  const [renderedToken, setRenderedToken] = useState(token);
  if (renderedToken !== token) {
    setRenderedToken(token);
    setUpdatedAt(new Date());
  }
  // An event asks for the token now (the query is made below, with the stream's status).
  const refetchToken = useRef<() => void>(() => undefined);
  // What asked for the token last, shown on the status line (data-refreshed-by): that a page
  // followed a change by its stream and not by a poll is what the e2e spec checks.
  const askedBy = useRef<"stream" | "poll">("poll");
  const [refreshedBy, setRefreshedBy] = useState<"stream" | "poll" | null>(null);
  // A refresh is pending (set with it, cleared when it lands), and a change was announced meanwhile.
  const refreshPending = useRef(false);
  const changedDuringRefresh = useRef(false);
  const stream = useLiveTopic(topic, () => {
    askedBy.current = "stream";
    if (refreshPending.current) changedDuringRefresh.current = true;
    else refetchToken.current();
  });
  const streaming = stream.status === "live";
  // Polling only while no event can come; not while the stream opens, nor after the session ended.
  const polling = isPolling(stream.status);
  // The token is part of the key: each render starts a query seeded with what it shows.
  const query = useQuery({
    queryKey: ["live", url, token],
    queryFn: async () => {
      const by = askedBy.current;
      askedBy.current = "poll";
      const latest = await fetchToken(url);
      if (latest !== token) setRefreshedBy(by);
      return latest;
    },
    initialData: token,
    initialDataUpdatedAt: () => Date.now(),
    // Events say when to look; polling only while they cannot.
    refetchInterval: polling ? intervalMs : false,
    staleTime: polling ? intervalMs - 500 : Infinity,
    retry: false,
  });
  useEffect(() => {
    refetchToken.current = () => void query.refetch();
  });
  const latest = query.data;

  // One refresh at a time. React entangles transitions that overlap and
  // commits them together, so a refresh started while another was pending
  // held both back: under changes that came faster than a render, the page
  // said "Loading…" until they stopped. Changes announced meanwhile are
  // looked at once, when the refresh has landed (its render may have read
  // before them); and a token is refreshed for once, so a render that still
  // shows an older token does not start another refresh by itself.
  const refreshedFor = useRef<string | undefined>(undefined);
  useEffect(() => {
    refreshPending.current = refreshing;
    if (refreshing) return;
    if (changedDuringRefresh.current) {
      changedDuringRefresh.current = false;
      refetchToken.current();
    } else if (latest !== token && latest !== refreshedFor.current) {
      refreshedFor.current = latest;
      refreshPending.current = true;
      startRefresh(() => router.refresh());
    }
  }, [latest, token, router, refreshing]);

  const mode = stream.status === "off" ? "Polling (live updates are off)" : polling ? "Live (polling)" : "Live";
  let text: string;
  let tone: "on" | "off" = "on";
  if (stream.status === "ended" || (query.error instanceof ConsoleRouteError && query.error.sessionEnded && polling)) {
    text = "Live updates stopped: your session ended. Reload to sign in again.";
    tone = "off";
  } else if (query.error instanceof ConsoleRouteError) {
    // The server answered, and said why (a role without the permission, a task that is gone).
    text = `Live updates paused: ${query.error.message}`;
    tone = "off";
  } else if (query.error) {
    text = "Live updates paused: the server cannot be reached. Retrying…";
    tone = "off";
  } else if (refreshing) {
    text = `Loading the latest ${what}…`;
  } else if (updatedAt) {
    // UTC, 24-hour, like every time the lists show (lib/adapters/console/shared/format.ts).
    text = `${mode} · updated ${updatedAt.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false, timeZone: "UTC" })} UTC`;
  } else {
    text = mode;
  }
  return (
    <p
      className={`live live--${tone}`}
      role="status"
      data-live-mode={polling ? "polling" : streaming ? "stream" : "connecting"}
      data-refreshed-by={refreshedBy ?? undefined}
      title={
        !polling
          ? `Updates as soon as this ${what} changes`
          : stream.status === "off"
            ? `Checks for changes to this ${what} every ${Math.round(intervalMs / 1000)} seconds: this deployment has turned live updates off`
            : `Checks for changes to this ${what} every ${Math.round(intervalMs / 1000)} seconds until live updates reconnect`
      }
    >
      <span className="live__dot" aria-hidden="true" />
      {text}
    </p>
  );
}
