import type { Db } from "@/lib/db/client";
import { readTaskCounts, type TaskCountRow } from "@/lib/stores/task-counts";

/**
 * The operations dashboard's numbers: plain aggregates over the live tables,
 * each shaped for one chart. Every query is bounded by an index (a time range
 * on `audit_entries (at, …)`, `write_conflicts (at)`, `divergence_alerts
 * (created_at)`, a status on `executions (status, updated_at)` and `reviews
 * (status, created_at)`); the task counts and the budget sums are read from
 * the counters kept as tasks change (lib/stores/task-counts.ts), never by
 * counting the tasks. See docs/dashboard.md for what each one counts.
 *
 * `now` is a parameter so that the buckets are the same for every query of
 * one dashboard and so that tests can place data at known ages.
 */

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

/** The series windows: the last hour by minute, the last 14 days by day (UTC). */
export const minuteWindow = 60;
export const dayWindow = 14;
export const decisionWindowDays = 30;

export interface StatusCount {
  status: string;
  /** Per workflow, so the chart can stack them and the list can be filtered by both. */
  byWorkflow: Record<string, number>;
  total: number;
}

export interface MinuteCount {
  /** Start of the minute, ISO. */
  at: string;
  count: number;
}

export interface ConflictMinute {
  at: string;
  version: number;
  fencing: number;
}

export const unknownAgeBuckets = [
  { key: "lt5m", label: "under 5 min", maxMs: 5 * minute },
  { key: "lt1h", label: "5–60 min", maxMs: hour },
  { key: "lt1d", label: "1–24 h", maxMs: day },
  { key: "gte1d", label: "over 24 h", maxMs: Number.POSITIVE_INFINITY },
] as const;
export type UnknownAgeBucket = (typeof unknownAgeBuckets)[number]["key"];

/** The uncertain executions: no outcome recorded as fact. OUTCOME_UNKNOWN is the reconciler's queue, NEEDS_HUMAN the operators'. */
export const uncertainStatuses = ["OUTCOME_UNKNOWN", "NEEDS_HUMAN"] as const;
export type UncertainStatus = (typeof uncertainStatuses)[number];

export interface UnknownOutcomes {
  /** Executions in OUTCOME_UNKNOWN now. */
  count: number;
  /** When the oldest of them entered that status (its updated_at), ISO; null when there is none. */
  oldestSince: string | null;
  /** Frozen executions (NEEDS_HUMAN) now, shown beside them. */
  frozen: number;
  oldestFrozenSince: string | null;
  buckets: Array<{ key: UnknownAgeBucket; label: string } & Record<UncertainStatus, number>>;
}

export interface ReviewStats {
  open: number;
  escalated: number;
  /** Since when the oldest undecided review has waited, ISO. */
  oldestWaitingSince: string | null;
  /** Reviews decided in the last `decisionWindowDays` days, and the time from opening to that decision. */
  decided: number;
  medianDecisionMs: number | null;
  p90DecisionMs: number | null;
  /** Per UTC day: reviews opened, and reviews decided, that day. */
  perDay: Array<{ day: string; opened: number; decided: number }>;
}

export interface AlertStats {
  /** Alerts OPEN (nobody has acted on them yet; escalated ones are with people) by severity: what /alerts?status=open lists. */
  openBySeverity: Record<string, number>;
  openTotal: number;
  /** Alerts raised per UTC day, by severity. */
  perDay: Array<{ day: string; bySeverity: Record<string, number>; total: number }>;
  severities: string[];
}

export interface BudgetRow {
  workflow: string;
  tasks: number;
  usdSpent: number;
  usdCommitted: number;
  tokensSpent: number;
}

export interface DashboardData {
  generatedAt: string;
  headline: { openAlerts: number; unknownOutcomes: number; reviewBacklog: number; conflictsLastHour: number };
  tasksByStatus: StatusCount[];
  transitionsPerMinute: MinuteCount[];
  unknownOutcomes: UnknownOutcomes;
  reviews: ReviewStats;
  alerts: AlertStats;
  conflictsPerMinute: ConflictMinute[];
  budget: BudgetRow[];
}

export async function loadDashboard(db: Db, now: Date = new Date()): Promise<DashboardData> {
  // One at a time: PGlite serves one query at a time anyway, and on
  // PostgreSQL a poll should hold one pooled connection, not seven.
  const counts = await readTaskCounts(db);
  const tasksByStatus = tasksByState(counts);
  const transitionsPerMinute = await countTransitionsPerMinute(db, now);
  const unknownOutcomes = await summarizeUnknownOutcomes(db, now);
  const reviews = await summarizeReviews(db, now);
  const alerts = await summarizeAlerts(db, now);
  const conflictsPerMinute = await countConflictsPerMinute(db, now);
  const budget = budgetByWorkflow(counts);
  return {
    generatedAt: now.toISOString(),
    headline: {
      openAlerts: alerts.openTotal,
      unknownOutcomes: unknownOutcomes.count,
      reviewBacklog: reviews.open + reviews.escalated,
      conflictsLastHour: conflictsPerMinute.reduce((n, m) => n + m.version + m.fencing, 0),
    },
    tasksByStatus,
    transitionsPerMinute,
    unknownOutcomes,
    reviews,
    alerts,
    conflictsPerMinute,
    budget,
  };
}

/** Tasks by current status (all workflows), largest first. */
function tasksByState(counts: readonly TaskCountRow[]): StatusCount[] {
  const byStatus = new Map<string, StatusCount>();
  for (const r of counts) {
    const entry = byStatus.get(r.status) ?? { status: r.status, byWorkflow: {}, total: 0 };
    entry.byWorkflow[r.workflow] = (entry.byWorkflow[r.workflow] ?? 0) + r.tasks;
    entry.total += r.tasks;
    byStatus.set(r.status, entry);
  }
  return [...byStatus.values()].sort((a, b) => b.total - a.total || a.status.localeCompare(b.status));
}

/**
 * Task state changes per minute over the last hour: audit entries of
 * task.transitioned and task.restored (a restore is a new version too;
 * creations are not changes). Read from the audit log because its (at, …)
 * index bounds the scan; the transitions table has no time index.
 */
export async function countTransitionsPerMinute(db: Db, now: Date): Promise<MinuteCount[]> {
  const { from, to } = minuteRange(now);
  const rows = await db.$queryRaw<Array<{ bucket: Date; n: number }>>`
    SELECT date_trunc('minute', at) AS bucket, count(*)::int AS n
      FROM audit_entries
     WHERE at >= ${from} AND at < ${to} AND action IN ('task.transitioned', 'task.restored')
     GROUP BY 1`;
  const counts = new Map(rows.map((r) => [r.bucket.getTime(), r.n]));
  return minuteStarts(from).map((t) => ({ at: new Date(t).toISOString(), count: counts.get(t) ?? 0 }));
}

/** Stale writes refused per minute over the last hour, by kind: a stale expected version, or a fencing token that is not the live lease. */
export async function countConflictsPerMinute(db: Db, now: Date): Promise<ConflictMinute[]> {
  const { from, to } = minuteRange(now);
  const rows = await db.$queryRaw<Array<{ bucket: Date; kind: string; n: number }>>`
    SELECT date_trunc('minute', at) AS bucket, kind, count(*)::int AS n
      FROM write_conflicts
     WHERE at >= ${from} AND at < ${to}
     GROUP BY 1, 2`;
  const buckets = new Map(
    minuteStarts(from).map((t) => [t, { at: new Date(t).toISOString(), version: 0, fencing: 0 }]),
  );
  for (const r of rows) {
    const b = buckets.get(r.bucket.getTime());
    if (!b) continue;
    if (r.kind === "fencing") b.fencing += r.n;
    else b.version += r.n;
  }
  return [...buckets.values()];
}

export async function summarizeUnknownOutcomes(db: Db, now: Date): Promise<UnknownOutcomes> {
  const cuts = unknownAgeBuckets.map((b) =>
    Number.isFinite(b.maxMs) ? new Date(now.getTime() - b.maxMs) : new Date(0),
  );
  // Each status is its own range on executions (status, updated_at).
  const rows = await db.$queryRaw<
    Array<{ status: UncertainStatus; n: number; oldest: Date | null; b0: number; b1: number; b2: number }>
  >`
    SELECT status::text AS status, count(*)::int AS n, min(updated_at) AS oldest,
           count(*) FILTER (WHERE updated_at > ${cuts[0]})::int AS b0,
           count(*) FILTER (WHERE updated_at <= ${cuts[0]} AND updated_at > ${cuts[1]})::int AS b1,
           count(*) FILTER (WHERE updated_at <= ${cuts[1]} AND updated_at > ${cuts[2]})::int AS b2
      FROM executions
     WHERE status IN ('OUTCOME_UNKNOWN'::"ExecutionStatus", 'NEEDS_HUMAN'::"ExecutionStatus")
     GROUP BY status`;
  const of = (s: UncertainStatus) => rows.find((r) => r.status === s);
  const bucketCount = (s: UncertainStatus, i: number) => {
    const r = of(s);
    if (!r) return 0;
    const counts = [r.b0, r.b1, r.b2];
    return i < counts.length ? counts[i]! : r.n - r.b0 - r.b1 - r.b2;
  };
  return {
    count: of("OUTCOME_UNKNOWN")?.n ?? 0,
    oldestSince: of("OUTCOME_UNKNOWN")?.oldest?.toISOString() ?? null,
    frozen: of("NEEDS_HUMAN")?.n ?? 0,
    oldestFrozenSince: of("NEEDS_HUMAN")?.oldest?.toISOString() ?? null,
    buckets: unknownAgeBuckets.map((b, i) => ({
      key: b.key,
      label: b.label,
      OUTCOME_UNKNOWN: bucketCount("OUTCOME_UNKNOWN", i),
      NEEDS_HUMAN: bucketCount("NEEDS_HUMAN", i),
    })),
  };
}

export async function summarizeReviews(db: Db, now: Date): Promise<ReviewStats> {
  const waiting = await db.$queryRaw<Array<{ status: string; n: number; oldest: Date | null }>>`
    SELECT status::text AS status, count(*)::int AS n, min(created_at) AS oldest
      FROM reviews
     WHERE status IN ('OPEN'::"ReviewStatus", 'ESCALATED'::"ReviewStatus")
     GROUP BY status`;
  const since = new Date(now.getTime() - decisionWindowDays * day);
  const [timing] = await db.$queryRaw<Array<{ n: number; median: number | null; p90: number | null }>>`
    SELECT count(*)::int AS n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at) * 1000) AS median,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at) * 1000) AS p90
      FROM reviews
     WHERE status IN ('APPROVED'::"ReviewStatus", 'REJECTED'::"ReviewStatus") AND decided_at >= ${since} AND decided_at <= ${now}`;
  const { from, days } = dayRange(now);
  const perDayRows = await db.$queryRaw<Array<{ bucket: Date; opened: number; decided: number }>>`
    SELECT bucket, sum(opened)::int AS opened, sum(decided)::int AS decided FROM (
      SELECT date_trunc('day', created_at, 'UTC') AS bucket, 1 AS opened, 0 AS decided FROM reviews WHERE created_at >= ${from} AND created_at <= ${now}
      UNION ALL
      SELECT date_trunc('day', decided_at, 'UTC'), 0, 1 FROM reviews
       WHERE status IN ('APPROVED'::"ReviewStatus", 'REJECTED'::"ReviewStatus") AND decided_at >= ${from} AND decided_at <= ${now}
    ) x GROUP BY bucket`;
  const perDay = new Map(perDayRows.map((r) => [r.bucket.getTime(), r]));
  const open = waiting.find((w) => w.status === "OPEN");
  const escalated = waiting.find((w) => w.status === "ESCALATED");
  const oldest = [open?.oldest, escalated?.oldest]
    .filter((d): d is Date => d instanceof Date)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  return {
    open: open?.n ?? 0,
    escalated: escalated?.n ?? 0,
    oldestWaitingSince: oldest?.toISOString() ?? null,
    decided: timing?.n ?? 0,
    medianDecisionMs:
      timing?.median === null || timing?.median === undefined ? null : Math.round(Number(timing.median)),
    p90DecisionMs: timing?.p90 === null || timing?.p90 === undefined ? null : Math.round(Number(timing.p90)),
    perDay: days.map((t) => ({
      day: isoDay(t),
      opened: perDay.get(t)?.opened ?? 0,
      decided: perDay.get(t)?.decided ?? 0,
    })),
  };
}

/** Severity order for stacking and legends; a severity nobody has defined yet goes after these. */
export const severityOrder = ["critical", "high", "medium", "low"] as const;

export async function summarizeAlerts(db: Db, now: Date): Promise<AlertStats> {
  const open = await db.$queryRaw<Array<{ severity: string; n: number }>>`
    SELECT severity, count(*)::int AS n FROM divergence_alerts
     WHERE status = 'OPEN'::"AlertStatus"
     GROUP BY severity`;
  const { from, days } = dayRange(now);
  const raised = await db.$queryRaw<Array<{ bucket: Date; severity: string; n: number }>>`
    SELECT date_trunc('day', created_at, 'UTC') AS bucket, severity, count(*)::int AS n
      FROM divergence_alerts
     WHERE created_at >= ${from} AND created_at <= ${now}
     GROUP BY 1, 2`;
  const seen = new Set([...open.map((o) => o.severity), ...raised.map((r) => r.severity)]);
  const severities = [
    ...severityOrder.filter((s) => seen.has(s)),
    ...[...seen].filter((s) => !(severityOrder as readonly string[]).includes(s)).sort(),
  ];
  const perDay = days.map((t) => {
    const bySeverity: Record<string, number> = {};
    for (const r of raised) if (r.bucket.getTime() === t) bySeverity[r.severity] = (bySeverity[r.severity] ?? 0) + r.n;
    return { day: isoDay(t), bySeverity, total: Object.values(bySeverity).reduce((a, b) => a + b, 0) };
  });
  const openBySeverity = Object.fromEntries(open.map((o) => [o.severity, o.n]));
  return { openBySeverity, openTotal: open.reduce((n, o) => n + o.n, 0), perDay, severities };
}

/**
 * Spend recorded in each task's budget (TaskState v2 `budget`), summed per
 * workflow over every task: the counters' sums (a budget a workflow declared
 * confidential is sealed, docs/encryption.md, and adds nothing).
 */
function budgetByWorkflow(counts: readonly TaskCountRow[]): BudgetRow[] {
  const byWorkflow = new Map<string, BudgetRow>();
  for (const r of counts) {
    const row = byWorkflow.get(r.workflow) ?? {
      workflow: r.workflow,
      tasks: 0,
      usdSpent: 0,
      usdCommitted: 0,
      tokensSpent: 0,
    };
    row.tasks += r.tasks;
    row.usdSpent += r.usdSpent;
    row.usdCommitted += r.usdCommitted;
    row.tokensSpent += r.tokensSpent;
    byWorkflow.set(r.workflow, row);
  }
  return [...byWorkflow.values()].sort((a, b) => a.workflow.localeCompare(b.workflow));
}

/** The last `minuteWindow` whole minutes and the current one, so a change made now shows at the right edge. */
function minuteRange(now: Date): { from: Date; to: Date } {
  const end = Math.floor(now.getTime() / minute) * minute + minute;
  return { from: new Date(end - minuteWindow * minute), to: new Date(end) };
}

function minuteStarts(from: Date): number[] {
  return Array.from({ length: minuteWindow }, (_, i) => from.getTime() + i * minute);
}

function dayRange(now: Date): { from: Date; days: number[] } {
  const today = Math.floor(now.getTime() / day) * day;
  const days = Array.from({ length: dayWindow }, (_, i) => today - (dayWindow - 1 - i) * day);
  return { from: new Date(days[0]!), days };
}

function isoDay(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}
