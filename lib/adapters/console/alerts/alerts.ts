import type { Db } from "@/lib/db/client";
import type { AuditEntry, DivergenceAlert, Execution, InvariantMonitorRun } from "@/lib/generated/prisma/client";
import type { AlertStatus } from "@/lib/generated/prisma/enums";
import {
  alertKinds,
  alertSeverities,
  alertStatuses,
  describeAlertKind,
  isAlertKind,
  isAlertSeverity,
  isBlocking,
  type AlertSeverity,
} from "@/lib/model/alerts/alert-kinds";
import { alertCounts, alertHistory, countAlerts, getAlert, listAlerts } from "@/lib/use-cases/alerts/alert-queries";
import { monitorStatus } from "@/lib/use-cases/monitor/monitor-runs";

/**
 * The alerts centre's console loaders and words: filters from the URL
 * (`status`, `severity`, `kind`, `task`, the dashboard links to these), the
 * page of alerts with the monitor's last pass, one alert with its history,
 * and the change token the page polls.
 */

export interface AlertFilters {
  status?: AlertStatus;
  severity?: AlertSeverity;
  kind?: string;
  task?: string;
  /** "asc": oldest first; the default (newest first) is left out of the URL. */
  order?: "asc";
  cursor?: string;
}

type SearchParams = Record<string, string | string[] | undefined>;

function one(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v && v.trim() ? v.trim() : undefined;
}

/** Unknown values are dropped (and reported), never passed on: a stale bookmark shows everything rather than an error. */
export function parseAlertFilters(params: SearchParams): { filters: AlertFilters; ignored: string[] } {
  const ignored: string[] = [];
  const filters: AlertFilters = {};
  const status = one(params.status)?.toUpperCase();
  if (status)
    (alertStatuses as readonly string[]).includes(status)
      ? (filters.status = status as AlertStatus)
      : ignored.push(`status "${status}"`);
  const severity = one(params.severity)?.toLowerCase();
  if (severity) isAlertSeverity(severity) ? (filters.severity = severity) : ignored.push(`severity "${severity}"`);
  const kind = one(params.kind);
  if (kind) isAlertKind(kind) ? (filters.kind = kind) : ignored.push(`kind "${kind}"`);
  const task = one(params.task);
  if (task) task.length <= 128 ? (filters.task = task) : ignored.push("task (too long)");
  if (one(params.order) === "asc") filters.order = "asc";
  const cursor = one(params.cursor);
  if (cursor && cursor.length <= 512) filters.cursor = cursor;
  return { filters, ignored };
}

export function alertsHref(filters: AlertFilters): string {
  const q = new URLSearchParams();
  for (const key of ["status", "severity", "kind", "task", "order", "cursor"] as const) {
    const v = filters[key];
    if (v) q.set(key, v);
  }
  const s = q.toString();
  return s ? `/alerts?${s}` : "/alerts";
}

export const severityInfo: Record<
  AlertSeverity,
  { label: string; glyph: string; tone: "danger" | "warning" | "attention" }
> = {
  critical: { label: "Critical", glyph: "◆", tone: "danger" },
  high: { label: "High", glyph: "▲", tone: "warning" },
  medium: { label: "Medium", glyph: "●", tone: "attention" },
};

export function severityOfText(severity: string): {
  label: string;
  glyph: string;
  tone: "danger" | "warning" | "attention" | "neutral";
} {
  return isAlertSeverity(severity) ? severityInfo[severity] : { label: severity, glyph: "○", tone: "neutral" };
}

export const alertStatusInfo: Record<
  AlertStatus,
  { label: string; tone: "danger" | "attention" | "neutral" | "success"; meaning: string }
> = {
  OPEN: { label: "Open", tone: "danger", meaning: "Nobody has acted on it yet." },
  ACKNOWLEDGED: {
    label: "Acknowledged",
    tone: "neutral",
    meaning: "A person recorded why no correction is needed; it no longer blocks.",
  },
  ESCALATED: {
    label: "Escalated",
    tone: "attention",
    meaning: "Handed to people; its task waits for them where its workflow allows.",
  },
  RESOLVED: { label: "Resolved", tone: "success", meaning: "Corrected, or reconciled with the provider." },
};

export const kindOptions = alertKinds.map((k) => ({ value: k, label: describeAlertKind(k) }));
export const severityOptions = alertSeverities.map((s) => ({ value: s, label: severityInfo[s].label }));
export const statusOptions = alertStatuses.map((s) => ({ value: s, label: alertStatusInfo[s].label }));

export interface AlertRow {
  id: string;
  kind: string;
  kindText: string;
  severity: string;
  status: AlertStatus;
  blocking: boolean;
  message: string;
  taskId: string | null;
  executionId: string | null;
  occurrences: number;
  createdAt: Date;
  lastSeenAt: Date;
  ageMs: number;
  version: number;
}

export function toAlertRow(a: DivergenceAlert, now = Date.now()): AlertRow {
  return {
    id: a.id,
    kind: a.kind,
    kindText: describeAlertKind(a.kind),
    severity: a.severity,
    status: a.status,
    blocking: isBlocking(a),
    message: a.message,
    taskId: a.taskId || null,
    executionId: a.executionId,
    occurrences: a.occurrences,
    createdAt: a.createdAt,
    lastSeenAt: a.lastSeenAt,
    ageMs: now - a.createdAt.getTime(),
    version: a.version,
  };
}

export type MonitorCheckCounts = Record<string, { examined?: number; violations?: number; error?: string }>;

export interface MonitorStrip {
  lastRun: {
    id: string;
    finishedAt: Date | null;
    startedAt: Date;
    checks: MonitorCheckCounts;
    violations: number;
    error: string | null;
  } | null;
  runningSince: Date | null;
}

function toStrip(run: InvariantMonitorRun | null, runningSince: Date | null): MonitorStrip {
  return {
    lastRun: run
      ? {
          id: run.id,
          startedAt: run.startedAt,
          finishedAt: run.finishedAt,
          checks: (run.checks ?? {}) as MonitorCheckCounts,
          violations: run.violations,
          error: run.error,
        }
      : null,
    runningSince,
  };
}

export interface AlertsPageData {
  filters: AlertFilters;
  ignored: string[];
  rows: AlertRow[];
  nextCursor: string | null;
  /** How many alerts the filters select, every page together. */
  total: number;
  counts: { open: number; blocking: number; bySeverity: Record<string, number> };
  monitor: MonitorStrip;
  token: string;
}

export async function loadAlertsPage(db: Db, params: SearchParams): Promise<AlertsPageData> {
  const { filters, ignored } = parseAlertFilters(params);
  const { cursor: _cursor, order: _order, ...selection } = filters;
  const [page, total, counts, status] = await Promise.all([
    listAlerts(db, { ...filters, limit: 50 }),
    countAlerts(db, selection),
    alertCounts(db),
    monitorStatus(db),
  ]);
  return {
    filters,
    ignored,
    rows: page.items.map((a) => toAlertRow(a)),
    nextCursor: page.nextCursor,
    total,
    counts,
    monitor: toStrip(status.last, status.runningSince),
    token: tokenOf(counts.latestChange, status.last),
  };
}

function tokenOf(latestChange: string | null, run: InvariantMonitorRun | null): string {
  return `${latestChange ?? "none"}|${run?.id ?? "none"}`;
}

/** What the page polls: changes when any alert changes or a monitor pass finishes. */
export async function alertsToken(db: Db): Promise<string> {
  const [counts, status] = await Promise.all([alertCounts(db), monitorStatus(db)]);
  return tokenOf(counts.latestChange, status.last);
}

export interface AlertDetailData {
  alert: DivergenceAlert;
  row: AlertRow;
  history: AuditEntry[];
  execution: Pick<Execution, "id" | "tool" | "status" | "idempotencyKey" | "toolCallId"> | null;
  task: { id: string; status: string; version: number } | null;
  token: string;
}

export async function loadAlertDetail(db: Db, id: string): Promise<AlertDetailData | null> {
  const alert = await getAlert(db, id);
  if (!alert) return null;
  const [history, execution, task] = await Promise.all([
    alertHistory(db, id),
    alert.executionId
      ? db.execution.findUnique({
          where: { id: alert.executionId },
          select: { id: true, tool: true, status: true, idempotencyKey: true, toolCallId: true },
        })
      : null,
    alert.taskId
      ? db.task.findFirst({ where: { id: alert.taskId }, select: { id: true, status: true, version: true } })
      : null,
  ]);
  return { alert, row: toAlertRow(alert), history, execution, task, token: alertToken(alert) };
}

export function alertToken(alert: Pick<DivergenceAlert, "version" | "occurrences" | "updatedAt">): string {
  return `${alert.version}:${alert.occurrences}:${alert.updatedAt.toISOString()}`;
}

/** An audit action of an alert's history, in words. */
export const historyActionText: Record<string, string> = {
  "divergence.raised": "Raised",
  "divergence.acknowledged": "Acknowledged",
  "divergence.escalated": "Escalated",
  "divergence.reconciled": "Reconciled with the provider",
  "divergence.resolved": "Resolved",
};
