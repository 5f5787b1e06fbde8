import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import type { AuditEntry, DivergenceAlert, Prisma } from "@/lib/generated/prisma/client";
import {
  alertKinds,
  alertSeverities,
  alertStatuses,
  blockingKinds,
  blockingStatuses,
  isBlocking,
} from "@/lib/model/alerts/alert-kinds";
import { parseOrThrow } from "@/lib/core/validation";
import { openSealedValues } from "@/lib/stores/field-encryption";
import { openedAlert } from "@/lib/use-cases/alerts/divergence";

/** Reads of the alerts centre: the filtered, keyset-paged list and one alert with its history. */

const statusEnum = z.enum(alertStatuses as unknown as ["OPEN", "ACKNOWLEDGED", "ESCALATED", "RESOLVED"]);

export const ListAlertsQuerySchema = z.strictObject({
  status: statusEnum.optional(),
  severity: z.enum(alertSeverities).optional(),
  kind: z.enum(alertKinds as unknown as [string, ...string[]]).optional(),
  task: z.string().trim().min(1).max(128).optional(),
  /** By when each was raised: newest first (default) or oldest first. */
  order: z.enum(["desc", "asc"]).default("desc"),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type ListAlertsQuery = z.input<typeof ListAlertsQuerySchema>;

export interface AlertPage {
  items: DivergenceAlert[];
  nextCursor: string | null;
}

/** Newest first (or oldest first), keyset on (created_at, id): page 100 costs what page 1 does. */
export async function listAlerts(db: Db, raw: ListAlertsQuery): Promise<AlertPage> {
  const q = parseOrThrow(ListAlertsQuerySchema, raw);
  const after = q.cursor ? decodeCursor(q.cursor) : null;
  const asc = q.order === "asc";
  const where: Prisma.DivergenceAlertWhereInput = {
    ...alertFiltersOf(q),
    ...(after
      ? asc
        ? {
            createdAt: { gte: after.createdAt },
            OR: [{ createdAt: { gt: after.createdAt } }, { id: { gt: after.id } }],
          }
        : {
            createdAt: { lte: after.createdAt },
            OR: [{ createdAt: { lt: after.createdAt } }, { id: { lt: after.id } }],
          }
      : {}),
  };
  const direction = asc ? "asc" : "desc";
  const rows = await db.divergenceAlert.findMany({
    where,
    orderBy: [{ createdAt: direction }, { id: direction }],
    take: q.limit + 1,
  });
  const items = await Promise.all(rows.slice(0, q.limit).map((row) => openedAlert(db, row)));
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null };
}

type AlertListFilters = Pick<z.output<typeof ListAlertsQuerySchema>, "status" | "severity" | "kind" | "task">;

/** The list's filters as a condition: the page and its total ask the same. */
function alertFiltersOf(q: AlertListFilters): Prisma.DivergenceAlertWhereInput {
  return {
    ...(q.status ? { status: q.status } : {}),
    ...(q.severity ? { severity: q.severity } : {}),
    ...(q.kind ? { kind: q.kind } : {}),
    ...(q.task ? { taskId: q.task } : {}),
  };
}

/** How many alerts the filters select: the list's total, counted once per page view. */
export async function countAlerts(db: Db, raw: Omit<ListAlertsQuery, "cursor" | "limit" | "order">): Promise<number> {
  return db.divergenceAlert.count({ where: alertFiltersOf(parseOrThrow(ListAlertsQuerySchema, raw)) });
}

export async function getAlert(db: Db, id: string): Promise<DivergenceAlert | null> {
  const row = await db.divergenceAlert.findUnique({ where: { id } });
  return row ? openedAlert(db, row) : null;
}

export async function getAlertOrThrow(db: Db, id: string): Promise<DivergenceAlert> {
  const alert = await getAlert(db, id);
  if (!alert) throw new AppError("not_found", `Alert ${id} does not exist.`);
  return alert;
}

/**
 * The alert's own audit entries, oldest first: raised, acknowledged,
 * escalated, reconciled, resolved; as the alert's page shows them, with the
 * values they quote sealed (a person's reason, the two sides) opened.
 */
export async function alertHistory(db: Db, id: string): Promise<AuditEntry[]> {
  const entries = await db.auditEntry.findMany({
    where: { stream: `divergence_alert:${id}` },
    orderBy: { seq: "asc" },
    take: 500,
  });
  return Promise.all(entries.map(async (e) => ({ ...e, details: await openSealedValues(db, e.details) })));
}

/** Counts for the console's header and the dashboard: unresolved by severity, and how many block work. */
export async function alertCounts(
  db: Db,
): Promise<{ open: number; blocking: number; bySeverity: Record<string, number>; latestChange: string | null }> {
  const [groups, blocking, latest] = await Promise.all([
    db.divergenceAlert.groupBy({
      by: ["severity"],
      where: { status: { in: ["OPEN", "ESCALATED"] } },
      _count: { _all: true },
    }),
    db.divergenceAlert.count({ where: { status: { in: [...blockingStatuses] }, kind: { in: [...blockingKinds] } } }),
    db.divergenceAlert.findFirst({
      orderBy: { updatedAt: "desc" },
      select: { id: true, updatedAt: true, occurrences: true, version: true },
    }),
  ]);
  const bySeverity = Object.fromEntries(groups.map((g) => [g.severity, g._count._all]));
  const open = groups.reduce((n, g) => n + g._count._all, 0);
  return {
    open,
    blocking,
    bySeverity,
    latestChange: latest
      ? `${latest.id}:${latest.updatedAt.toISOString()}:${latest.version}:${latest.occurrences}`
      : null,
  };
}

/** Unresolved alerts of one task (OPEN, ACKNOWLEDGED, ESCALATED), newest first: the task page's panel. */
export async function unresolvedAlertsOfTask(
  db: Db,
  taskId: string,
): Promise<Array<DivergenceAlert & { blocking: boolean }>> {
  const rows = await db.divergenceAlert.findMany({
    where: { taskId, status: { not: "RESOLVED" } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 50,
  });
  return Promise.all(rows.map(async (r) => ({ ...(await openedAlert(db, r)), blocking: isBlocking(r) })));
}

/** An alert page's cursor: the last row's (created_at, id). */
const alertPageCursor = keysetCursor([keysetParts.instant, keysetParts.text], {
  notOurs: "not a cursor returned by this API",
});

function encodeCursor(a: DivergenceAlert): string {
  return alertPageCursor.encode([a.createdAt, a.id]);
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [createdAt, id] = alertPageCursor.decode(cursor);
  return { createdAt, id };
}
