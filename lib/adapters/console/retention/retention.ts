import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { listLegalHolds, MIN_RETENTION_DAYS } from "@/lib/use-cases/audit/audit-retention";
import type { AuditAnchor, AuditLegalHold } from "@/lib/generated/prisma/client";
import type { RetentionPolicy as TenantRetentionPolicy } from "@/lib/stores/retention-policies";

/**
 * What /audit/retention shows: the policy the server runs, the last
 * retention runs and cuts, and the legal holds. Reads only; every write goes
 * through lib/use-cases/audit/audit-retention.ts, which records it in the audit log.
 */

export interface RetentionPolicy {
  /** Null: keep every entry forever (VERITY_AUDIT_RETENTION_DAYS unset). */
  olderThanDays: number | null;
  /** Null: keep finished tasks' data forever (VERITY_TASK_RETENTION_DAYS unset). */
  taskOlderThanDays: number | null;
  everyMs: number;
  /** The background loop is off (VERITY_RECONCILE_INTERVAL_MS=0), so no scheduled run happens whatever the policy. */
  loopOff: boolean;
  /** The tenant's own terms per data class (lib/stores/retention-policies.ts); when set, they replace taskOlderThanDays. */
  tenantPolicy: TenantRetentionPolicy;
}

export interface RetentionRun {
  /** What the run deleted: old audit entries (a prefix of each stream), or finished tasks' data in every store. */
  scope: "audit_entries" | "task_data";
  entryId: string;
  at: Date;
  actor: string;
  olderThanDays: number | null;
  cutoff: string | null;
  /** Streams cut, and where. */
  streams: number;
  cuts: Array<{ stream: string; throughSeq: number }>;
  /** Streams that had old entries a legal hold kept. */
  heldStreams: number;
  /** Task data: the tasks deleted, the rows removed (all stores), the finished tasks a hold kept. */
  tasks: string[];
  rows: number;
  heldTasks: number;
}

export interface RetentionOverview {
  runs: RetentionRun[];
  anchors: AuditAnchor[];
  holds: AuditLegalHold[];
}

const RunDetailsSchema = z.object({
  older_than_days: z.number().optional(),
  cutoff: z.string().optional(),
  cuts: z.array(z.object({ stream: z.string(), through_seq: z.number() })).optional(),
  held_streams: z.array(z.string()).optional(),
  scope: z.string().optional(),
  /** A task-data run's later entries, which only carry more of its cuts. */
  run: z.string().optional(),
  tasks: z.array(z.object({ id: z.string() })).optional(),
  rows: z.record(z.string(), z.number()).optional(),
  held_tasks: z.array(z.string()).optional(),
});

export async function loadRetentionOverview(
  db: Db,
  options: { runs?: number; anchors?: number } = {},
): Promise<RetentionOverview> {
  // The system stream's entries are few (holds, runs, exports); its (stream, seq) key orders them.
  const entries = await db.auditEntry.findMany({
    where: { stream: "system", action: "audit.retention_applied" },
    orderBy: { seq: "desc" },
    // A task-data run may take several entries (its cuts, 150 to an entry): room for them, then only the first of each.
    take: (options.runs ?? 10) * 3,
    select: { id: true, at: true, actor: true, details: true },
  });
  const parsed = entries.map((e) => ({ e, d: RunDetailsSchema.safeParse(e.details).data ?? {} }));
  const runs = parsed
    .filter(({ d }) => d.run === undefined)
    .slice(0, options.runs ?? 10)
    .map(({ e, d }): RetentionRun => {
      return {
        scope: d.scope === "task_data" ? "task_data" : "audit_entries",
        entryId: e.id,
        at: e.at,
        actor: e.actor,
        olderThanDays: d.older_than_days ?? null,
        cutoff: d.cutoff ?? null,
        streams: d.cuts?.length ?? 0,
        cuts: (d.cuts ?? []).map((c) => ({ stream: c.stream, throughSeq: c.through_seq })),
        heldStreams: d.held_streams?.length ?? 0,
        tasks: (d.tasks ?? []).map((t) => t.id),
        rows: Object.values(d.rows ?? {}).reduce((n, c) => n + c, 0),
        heldTasks: d.held_tasks?.length ?? 0,
      };
    });
  const anchors = await db.auditAnchor.findMany({
    orderBy: [{ cutAt: "desc" }, { stream: "asc" }],
    take: options.anchors ?? 50,
  });
  const holds = await listLegalHolds(db, { includeReleased: true });
  return { runs, anchors, holds };
}

/** A hold's scope in words: "task X", "entries from A to B", "everything". A hold keeps audit entries and, for the tasks it covers, their data in every store. */
export function describeHoldScope(hold: Pick<AuditLegalHold, "taskId" | "fromAt" | "toAt">): string {
  const range =
    hold.fromAt && hold.toAt
      ? `written from ${isoMinute(hold.fromAt)} to ${isoMinute(hold.toAt)} UTC`
      : hold.fromAt
        ? `written from ${isoMinute(hold.fromAt)} UTC on`
        : hold.toAt
          ? `written before ${isoMinute(hold.toAt)} UTC`
          : null;
  if (hold.taskId && range) return `Entries of task ${hold.taskId} ${range}`;
  if (hold.taskId) return `Every entry of task ${hold.taskId}`;
  if (range) return `Every entry ${range}`;
  return "The whole tenant, tenant-wide: every entry and every task's data (no task, no time bound)";
}

function isoMinute(d: Date): string {
  return d.toISOString().slice(0, 16).replace("T", " ");
}

/** Form input → the engine's hold input: `datetime-local` values are read as UTC, the console's zone. */
export const PlaceHoldFormSchema = z.object({
  taskId: z
    .string()
    .trim()
    .max(128)
    .optional()
    .transform((v) => (v ? v : undefined)),
  from: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined)),
  to: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined)),
  reason: z.string(),
});

export function utcInstantFromLocalInput(value: string | undefined): string | undefined {
  if (!value) return undefined;
  // "2026-11-30T14:05" or with seconds; anything else is passed on for the engine to refuse by field.
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)
    ? `${value.length === 16 ? `${value}:00` : value}Z`
    : value;
}

export const ApplyTaskRetentionFormSchema = z.object({
  days: z.coerce.number().int().min(MIN_RETENTION_DAYS).max(36_500),
  confirm: z.literal("yes"),
});

/**
 * The form that sets one class's term. `keep_days` is passed on as typed
 * (empty: forever; a number; anything else is left for the engine to refuse
 * by name), so the engine's word about the field is the one shown beside it.
 */
export const SetRetentionTermFormSchema = z.object({
  data_class: z.string(),
  keep_days: z.string().default(""),
  expected_version: z.coerce.number().int().min(0),
});

/** The typed term: empty is forever (null); digits are a number; anything else is passed on for the engine to name. */
export function keepDaysOfForm(typed: string): unknown {
  const value = typed.trim();
  if (value === "") return null;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

export const ApplyRetentionFormSchema = z.object({
  days: z.coerce.number().int().min(MIN_RETENTION_DAYS).max(36_500),
  confirm: z.literal("yes"),
});
