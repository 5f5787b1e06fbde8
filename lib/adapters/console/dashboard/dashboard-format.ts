import type { DashboardData } from "@/lib/adapters/console/dashboard/dashboard";
import { executionListHref } from "@/lib/adapters/console/executions/executions-query";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { formatDuration } from "@/lib/core/format-duration";
import { taskListHref } from "@/lib/adapters/console/tasks/task-list-href";

/**
 * The dashboard in words and links (pure, shared by the server render and
 * the polling client): each chart's one-sentence summary, which is what a
 * screen reader hears instead of the drawing, and the filtered list behind it.
 */

/** `/alerts` filters (the alerts centre's query string): status, severity, kind, task. */
export function alertsHref(filter: { status?: "open"; severity?: string; kind?: string; task?: string }): string {
  const search = new URLSearchParams();
  if (filter.status) search.set("status", filter.status);
  if (filter.severity) search.set("severity", filter.severity);
  if (filter.kind) search.set("kind", filter.kind);
  if (filter.task) search.set("task", filter.task);
  const query = search.toString();
  return query ? `/alerts?${query}` : "/alerts";
}

export const dashboardLinks = {
  tasks: "/tasks",
  tasksWithStatus: (status: string) => taskListHref({ status }),
  tasksOfWorkflow: (workflow: string) => taskListHref({ workflow }),
  unknownOutcomes: executionListHref({ status: "OUTCOME_UNKNOWN" }),
  frozen: executionListHref({ status: "NEEDS_HUMAN" }),
  reviewsWaiting: "/reviews",
  reviewsAll: "/reviews?status=all",
  openAlerts: alertsHref({ status: "open" }),
  openAlertsOfSeverity: (severity: string) => alertsHref({ status: "open", severity }),
  staleWrites: alertsHref({ kind: "stale_write" }),
} as const;

export function ageSince(iso: string | null, now: string): string | null {
  return iso ? formatDuration(new Date(now).getTime() - new Date(iso).getTime()) : null;
}

const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 2 });
export function formatUsdShort(value: number): string {
  return usd.format(value);
}

export function describeTasksByState(d: DashboardData): string {
  const total = d.tasksByStatus.reduce((n, s) => n + s.total, 0);
  if (total === 0) return "No tasks yet.";
  const top = d.tasksByStatus.slice(0, 3).map((s) => `${s.total} ${s.status}`);
  return `${pluralize(total, "task")} in ${pluralize(d.tasksByStatus.length, "state")}; most are ${top.join(", ")}.`;
}

export function describeTransitions(d: DashboardData): string {
  const total = d.transitionsPerMinute.reduce((n, m) => n + m.count, 0);
  if (total === 0) return "No task changed state in the last 60 minutes.";
  const peak = d.transitionsPerMinute.reduce((a, b) => (b.count > a.count ? b : a));
  const last = d.transitionsPerMinute.at(-1)?.count ?? 0;
  return `${pluralize(total, "state change")} in the last 60 minutes; at most ${peak.count} in one minute; ${last} this minute.`;
}

export function describeUnknownOutcomes(d: DashboardData): string {
  const u = d.unknownOutcomes;
  const unknown =
    u.count === 0
      ? "No execution has an unknown outcome."
      : `${pluralize(u.count, "execution")} with an unknown outcome, the oldest for ${ageSince(u.oldestSince, d.generatedAt)}.`;
  const frozen =
    u.frozen === 0
      ? "None is frozen for people."
      : `${pluralize(u.frozen, "frozen execution")} waiting for people, the oldest for ${ageSince(u.oldestFrozenSince, d.generatedAt)}.`;
  return `${unknown} ${frozen}`;
}

export function describeReviews(d: DashboardData): string {
  const r = d.reviews;
  const backlog = r.open + r.escalated;
  const waiting =
    backlog === 0
      ? "No review is waiting."
      : `${pluralize(backlog, "review")} waiting (${r.open} open, ${r.escalated} escalated), the oldest for ${ageSince(r.oldestWaitingSince, d.generatedAt)}.`;
  const timing =
    r.decided === 0 || r.medianDecisionMs === null || r.p90DecisionMs === null
      ? "None decided in the last 30 days."
      : `${pluralize(r.decided, "review")} decided in the last 30 days: median ${formatDuration(r.medianDecisionMs)}, 90th percentile ${formatDuration(r.p90DecisionMs)} from opening to decision.`;
  return `${waiting} ${timing}`;
}

export function describeAlerts(d: DashboardData): string {
  const a = d.alerts;
  const raised = a.perDay.reduce((n, p) => n + p.total, 0);
  const open =
    a.openTotal === 0
      ? "No alert is open."
      : `${pluralize(a.openTotal, "alert")} open: ${a.severities
          .filter((s) => a.openBySeverity[s])
          .map((s) => `${a.openBySeverity[s]} ${s}`)
          .join(", ")}.`;
  return `${open} ${pluralize(raised, "alert")} raised in the last 14 days.`;
}

export function describeConflicts(d: DashboardData): string {
  const version = d.conflictsPerMinute.reduce((n, m) => n + m.version, 0);
  const fencing = d.conflictsPerMinute.reduce((n, m) => n + m.fencing, 0);
  if (version + fencing === 0) return "No write was refused as stale in the last 60 minutes.";
  return `${pluralize(version + fencing, "stale write")} refused in the last 60 minutes: ${version} with an outdated version, ${fencing} with an outdated fencing token.`;
}

export function describeBudget(d: DashboardData): string {
  if (d.budget.length === 0) return "No tasks, so nothing spent.";
  const usdTotal = d.budget.reduce((n, b) => n + b.usdSpent, 0);
  const tokens = d.budget.reduce((n, b) => n + b.tokensSpent, 0);
  return `${formatUsdShort(usdTotal)} and ${pluralize(tokens, "token")} spent in total: ${d.budget.map((b) => `${b.workflow} ${formatUsdShort(b.usdSpent)}`).join(", ")}.`;
}

/** "14:05" in UTC, the console's zone: the minute axis. */
export function minuteLabel(iso: string): string {
  return iso.slice(11, 16);
}

/** "30 Nov": the day axis. */
export function dayLabel(isoDay: string): string {
  const d = new Date(`${isoDay}T00:00:00Z`);
  return d.toLocaleDateString("en-GB", { day: "2-digit", month: "short", timeZone: "UTC" });
}
