"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useState, useTransition } from "react";
import { ConsoleRouteError, fetchConsoleJson } from "@/lib/adapters/console/shared/console-fetch";

async function fetchToken(url: string): Promise<string> {
  const body = await fetchConsoleJson<{ token?: unknown }>(url);
  if (typeof body.token !== "string") throw new Error("unexpected answer");
  return body.token;
}

/**
 * Keeps a server-rendered page current: polls `url` for a change token and,
 * when it differs from the one the page was rendered with, asks the router
 * for a fresh render. Client state (a half-typed reason) survives a refresh.
 * Polling pauses while the tab is hidden.
 */
export function LiveRefresh({
  url,
  token,
  intervalMs = 3000,
  what,
}: {
  url: string;
  token: string;
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
  // The token is part of the key: each render starts a query seeded with what it shows.
  const query = useQuery({
    queryKey: ["live", url, token],
    queryFn: () => fetchToken(url),
    initialData: token,
    initialDataUpdatedAt: () => Date.now(),
    refetchInterval: intervalMs,
    staleTime: intervalMs - 500,
    retry: false,
  });
  const latest = query.data;

  useEffect(() => {
    if (latest !== token) startRefresh(() => router.refresh());
  }, [latest, token, router]);

  let text: string;
  let tone: "on" | "off" = "on";
  if (query.error instanceof ConsoleRouteError && query.error.sessionEnded) {
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
    text = `Live · updated ${updatedAt.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false, timeZone: "UTC" })} UTC`;
  } else {
    text = "Live";
  }
  return (
    <p
      className={`live live--${tone}`}
      role="status"
      title={`Checks for changes to this ${what} every ${Math.round(intervalMs / 1000)} seconds`}
    >
      <span className="live__dot" aria-hidden="true" />
      {text}
    </p>
  );
}
