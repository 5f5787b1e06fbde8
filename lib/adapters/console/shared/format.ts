import { formatDuration } from "@/lib/core/format-duration";
import type { Guard } from "@/lib/model/workflows/workflow-definition";

/**
 * Formatting shared by the console's server components. Times are shown in
 * UTC with the zone named: operators in different places compare timestamps
 * from the same timeline, and the server and browser may disagree on a zone.
 */
const dateTime = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false,
  timeZone: "UTC",
});

export function formatDateTime(date: Date): string {
  return `${dateTime.format(date)} UTC`;
}

const day = new Intl.DateTimeFormat("en-GB", { year: "numeric", month: "short", day: "2-digit", timeZone: "UTC" });
const relativeSpanMs = 30 * 24 * 60 * 60 * 1000;

/**
 * When something happened, as a person scanning a list reads it: "12 min ago",
 * "3 h 5 min ago", "in 2 d" (an expiry), "just now" within 5 s either way (two
 * clocks a little apart). In the console's one duration format
 * (formatDuration); past 30 days the day itself ("02 Nov 2026"), since "47 d
 * 3 h ago" is a date to work out. The exact time goes beside it (RelativeTime).
 */
export function formatRelativeTime(date: Date, now: Date): string {
  const ms = now.getTime() - date.getTime();
  if (Math.abs(ms) < 5_000) return "just now";
  if (Math.abs(ms) >= relativeSpanMs) return day.format(date);
  return ms > 0 ? `${formatDuration(ms)} ago` : `in ${formatDuration(-ms)}`;
}

const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 4 });
const integer = new Intl.NumberFormat("en-US");

export function formatUsd(value: number): string {
  return usd.format(value);
}

export function formatInteger(value: number): string {
  return integer.format(value);
}

const spiffePrefix = /^spiffe:\/\/[^/]+\//;

/** `spiffe://verity.local/agent/refund-bot` → `agent/refund-bot`: the trust domain is the same everywhere here. */
export function shortIdentity(identity: string): string {
  return identity.replace(spiffePrefix, "");
}

export function shortDigest(digest: string): string {
  return digest.replace(/^sha256:/, "").slice(0, 12);
}

export function describeGuard(guard: Guard): string {
  switch (guard.kind) {
    case "gates_true":
      return `gate${guard.gates.length > 1 ? "s" : ""} ${guard.gates.join(", ")} true`;
    case "mandatory_subtasks_completed":
      return "every mandatory subtask completed";
    case "artifact_present":
      return `artifact ${guard.artifact} present`;
    case "budget_within_commitment":
      return "spending within the committed budget";
  }
}

export function pluralize(count: number, one: string, many = `${one}s`): string {
  return `${formatInteger(count)} ${count === 1 ? one : many}`;
}

/**
 * A list's total: "1 task matches these filters", "12 tasks in all"; with
 * `among`, the count was made among that many most recent ones ("3 tasks
 * match these filters among the 10,000 changed most recently").
 */
export function listTotal(count: number, one: string, filtered: boolean, among: number | null = null): string {
  const total = `${pluralize(count, one)} ${filtered ? (count === 1 ? "matches these filters" : "match these filters") : "in all"}`;
  return among === null ? total : `${total} among the ${formatInteger(among)} changed most recently`;
}
