import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { Prisma, type AuditLegalHold } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { SYSTEM_STREAM, type AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry, type AuditEntry } from "@/lib/stores/audit-log";
import { parseOrThrow } from "@/lib/core/validation";

/**
 * Retention and legal hold (spec 000, enterprise notes): old entries may be
 * deleted by policy, a hold freezes that deletion, and correction
 * annotations stay possible under a hold (audit-log.ts annotateAuditEntry).
 * The owner of `audit_legal_holds`; `audit_anchors` is written by the
 * database function audit_cut_stream(), which this module alone calls.
 */

const isoInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

export const LegalHoldInputSchema = z
  .strictObject({
    /** Holds the entries of one task. */
    task_id: z.string().min(1).max(128).optional(),
    /** Holds entries written at or after this instant. */
    from: isoInstant.optional(),
    /** Holds entries written before this instant. */
    to: isoInstant.optional(),
    reason: z.string().trim().min(1).max(1000),
  })
  .refine((h) => !h.from || !h.to || h.from < h.to, { path: ["to"], message: "must be after from" });
export type LegalHoldInput = z.input<typeof LegalHoldInputSchema>;

/**
 * Places a hold. The hold row and its audit entry commit together; the
 * insert waits while a retention cut holds its lock on the holds table, so a
 * hold is never placed "under" a cut that does not see it.
 */
export async function placeLegalHold(db: Db, rawInput: LegalHoldInput, actor: AuditActor): Promise<AuditLegalHold> {
  const input = parseOrThrow(LegalHoldInputSchema, rawInput);
  return db.$transaction(async (tx) => {
    const hold = await tx.auditLegalHold.create({
      data: {
        id: newId("hold"),
        taskId: input.task_id ?? null,
        fromAt: input.from ?? null,
        toAt: input.to ?? null,
        reason: input.reason,
        placedBy: actor.identity,
      },
    });
    await appendAuditEntry(tx, {
      action: "audit.legal_hold_placed",
      actor,
      subject: { type: "legal_hold", id: hold.id },
      taskId: hold.taskId,
      details: {
        task_id: hold.taskId,
        from: hold.fromAt?.toISOString() ?? null,
        to: hold.toAt?.toISOString() ?? null,
        reason: hold.reason,
      },
    });
    return hold;
  });
}

/** Releases a hold (CAS on "not yet released"): retention may then delete what it covered. */
export async function releaseLegalHold(
  db: Db,
  holdId: string,
  reason: string,
  actor: AuditActor,
): Promise<AuditLegalHold> {
  const why = parseOrThrow(z.string().trim().min(1).max(1000), reason);
  return db.$transaction(async (tx) => {
    const released = await tx.auditLegalHold.updateMany({
      where: { id: holdId, releasedAt: null },
      data: { releasedAt: new Date(), releasedBy: actor.identity },
    });
    const hold = await tx.auditLegalHold.findUnique({ where: { id: holdId } });
    if (!hold) throw new AppError("not_found", `Legal hold ${holdId} does not exist.`);
    if (released.count === 0)
      throw new AppError(
        "version_conflict",
        `Legal hold ${holdId} was already released at ${hold.releasedAt?.toISOString()}.`,
      );
    await appendAuditEntry(tx, {
      action: "audit.legal_hold_released",
      actor,
      subject: { type: "legal_hold", id: hold.id },
      taskId: hold.taskId,
      details: { reason: why },
    });
    return hold;
  });
}

export async function listLegalHolds(db: Db, options: { includeReleased?: boolean } = {}): Promise<AuditLegalHold[]> {
  return db.auditLegalHold.findMany({
    where: options.includeReleased ? {} : { releasedAt: null },
    orderBy: { placedAt: "desc" },
  });
}

export interface RetentionCut {
  stream: string;
  through_seq: number;
  /** The hash of the last entry removed: the anchor the rest of the stream links to. */
  hash: string;
  deleted: number;
}

export interface RetentionResult {
  cutoff: Date;
  cuts: RetentionCut[];
  /** Streams with entries past the cutoff that a legal hold kept. */
  heldStreams: string[];
  /** The audit.retention_applied entry; null when there was nothing to delete. */
  entry: AuditEntry | null;
}

/** Fewer days would let a mistaken call erase what operators are still looking at. */
export const MIN_RETENTION_DAYS = 1;

/**
 * Deletes, stream by stream, the oldest entries written before now minus
 * `olderThanDays`, stopping in each stream at the first entry that is newer
 * or under a legal hold (only a prefix leaves, so what remains still links
 * to the anchor). One transaction: the audit.retention_applied entry (in the
 * system stream) records every cut with the hash at the cut, and
 * audit_cut_stream() re-checks holds and age in the database before each
 * delete.
 */
export async function applyAuditRetention(
  db: Db,
  input: { olderThanDays: number },
  actor: AuditActor,
): Promise<RetentionResult> {
  const days = parseOrThrow(z.number().int().min(MIN_RETENTION_DAYS).max(36_500), input.olderThanDays);
  const cutoff = new Date(Date.now() - days * 86_400_000);
  return db.$transaction(
    async (tx) => {
      // First, before the system stream's head: a hold placed concurrently
      // takes the same two locks in the other order only after its insert,
      // which this lock already excludes.
      await tx.$executeRaw`LOCK TABLE audit_legal_holds IN SHARE MODE`;
      const plan = await tx.$queryRaw<Array<{ stream: string; through_seq: number; hash: string; held: boolean }>>`
        WITH old AS (
          SELECT DISTINCT stream FROM audit_entries WHERE at < ${cutoff.toISOString()}::timestamptz
        ), stops AS (
          SELECT o.stream,
                 (SELECT min(e.seq) FROM audit_entries e
                   WHERE e.stream = o.stream AND (e.at >= ${cutoff.toISOString()}::timestamptz OR audit_hold_covers(e.task_id, e.at))) AS first_kept,
                 (SELECT min(e.seq) FROM audit_entries e
                   WHERE e.stream = o.stream AND e.at < ${cutoff.toISOString()}::timestamptz AND audit_hold_covers(e.task_id, e.at)) AS first_held,
                 (SELECT max(e.seq) FROM audit_entries e WHERE e.stream = o.stream) AS last_seq
            FROM old o
        )
        SELECT s.stream, coalesce(s.first_kept - 1, s.last_seq) AS through_seq, e.hash, s.first_held IS NOT NULL AS held
          FROM stops s
          LEFT JOIN audit_entries e ON e.stream = s.stream AND e.seq = coalesce(s.first_kept - 1, s.last_seq)
         ORDER BY s.stream`;
      const heldStreams = plan.filter((p) => p.held).map((p) => p.stream);
      const cuts = plan.filter((p) => p.hash !== null);
      if (cuts.length === 0) return { cutoff, cuts: [], heldStreams, entry: null };
      const entry = await appendAuditEntry(tx, {
        action: "audit.retention_applied",
        actor,
        subject: { type: "audit_log", id: SYSTEM_STREAM },
        details: {
          older_than_days: days,
          cutoff: cutoff.toISOString(),
          cuts: cuts.map((c) => ({ stream: c.stream, through_seq: c.through_seq, hash: c.hash })),
          held_streams: heldStreams,
        },
      });
      const done: RetentionCut[] = [];
      for (const { stream, through_seq, hash } of cuts)
        done.push({
          stream,
          through_seq,
          hash,
          deleted: await cutAuditStream(tx, { stream, through_seq }, cutoff, entry.id),
        });
      return { cutoff, cuts: done, heldStreams, entry };
    },
    // A large cut is a long transaction; it only contends with holds being placed.
    { timeout: 10 * 60_000 },
  );
}

/**
 * Removes a stream's entries through `cut.through_seq` and anchors the rest
 * to the hash there: audit_cut_stream() re-checks in the database that each
 * is older than `cutoff`, that no legal hold covers any, and that `entryId`
 * is the audit.retention_applied entry recording the cut (in this
 * transaction). The one caller of that function besides the run above is
 * task-data retention (lib/use-cases/retention/), which cuts a finished
 * task's streams whole.
 */
export async function cutAuditStream(
  tx: Tx,
  cut: { stream: string; through_seq: number },
  cutoff: Date,
  entryId: string,
): Promise<number> {
  const [row] = await tx.$queryRaw<Array<{ deleted: number }>>`
    SELECT audit_cut_stream(${cut.stream}, ${cut.through_seq}::int, ${cutoff.toISOString()}::timestamptz, ${entryId}) AS deleted`;
  return row?.deleted ?? 0;
}

/**
 * Whole-stream cuts of the named streams: each through its head, with the
 * head's hash as the anchor (streams already cut to their head are left
 * out), with the number of entries each removes. Verification then finds
 * each stream empty, its head at its anchor.
 */
export async function planWholeStreamCuts(
  tx: Tx,
  streams: readonly string[],
): Promise<Array<{ stream: string; through_seq: number; hash: string; entries: number }>> {
  if (streams.length === 0) return [];
  return tx.$queryRaw<Array<{ stream: string; through_seq: number; hash: string; entries: number }>>`
    SELECT s.stream, s.last_seq AS through_seq, s.last_hash AS hash,
           (SELECT count(*) FROM audit_entries e WHERE e.stream = s.stream AND e.seq <= s.last_seq)::int AS entries
      FROM audit_streams s LEFT JOIN audit_anchors a ON a.stream = s.stream
     WHERE s.stream IN (${Prisma.join([...streams])}) AND s.last_seq > coalesce(a.through_seq, 0)
     ORDER BY s.stream`;
}

/** Who the scheduled run is in the audit log: the server, not a person. */
export const retentionActor: AuditActor = { identity: "spiffe://verity.local/system/audit-retention", kind: "system" };

export interface RetentionSchedule {
  olderThanDays: number;
  /** At most one run per this many milliseconds (VERITY_AUDIT_RETENTION_INTERVAL_MS). */
  everyMs: number;
}

/**
 * The background loop's retention step: applies the policy when it never
 * ran in this process or `everyMs` has passed since the last attempt, and
 * otherwise answers null without touching the database. A failed run counts
 * as an attempt, so a failing cut is retried an interval later rather than
 * every tick. Several processes may each run it: a cut re-checks age and
 * holds in the database, and one that finds nothing old records nothing.
 */
export function scheduledRetention(
  schedule: RetentionSchedule,
  clock: () => number = Date.now,
): (db: Db) => Promise<RetentionResult | null> {
  let lastAttempt: number | null = null;
  return async (db) => {
    const now = clock();
    if (lastAttempt !== null && now - lastAttempt < schedule.everyMs) return null;
    lastAttempt = now;
    return applyAuditRetention(db, { olderThanDays: schedule.olderThanDays }, retentionActor);
  };
}
