import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import { Prisma } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import {
  AuditActionSchema,
  contentDigestOf,
  normalizeDetails,
  storableText,
  StreamVerifier,
  streamFor,
  type AuditActor,
  type AuditActorKind,
  type AuditBreak,
  type AuditContent,
  type AuditLink,
  type AuditEntryInput,
} from "@/lib/model/audit/audit-chain";
import { parseOrThrow } from "@/lib/core/validation";

/**
 * The owner of `audit_entries` and `audit_streams`: every audit write goes
 * through appendAuditEntry (or its SQL form, auditEntryInsertSql, for a
 * caller that joins it to its own statement), in the transaction of what it
 * records. The database links each insert into its stream's chain (trigger
 * audit_entries_chain) and refuses UPDATE, DELETE and TRUNCATE; this module
 * computes the content digest the link covers, and verifies the chains.
 */

/** A stored entry; `contentDigest` as stored (verification recomputes it from the fields). */
export type AuditEntry = AuditLink & { contentDigest: string };

/** The entry as it will be stored, before the trigger links it. */
function prepareEntry(input: AuditEntryInput, stream = streamFor(input)): AuditContent & { contentDigest: string } {
  const content: AuditContent = {
    id: newId("aud"),
    stream,
    at: input.at ?? new Date(),
    actor: storableText(input.actor.identity),
    actorKind: input.actor.kind,
    action: input.action,
    subjectType: input.subject.type,
    subjectId: storableText(input.subject.id),
    taskId: input.taskId ?? null,
    details: normalizeDetails(input.details),
  };
  return { ...content, contentDigest: contentDigestOf(content) };
}

const guardRelation = /^[a-z_][a-z0-9_]*$/;

function insertSql(e: AuditContent & { contentDigest: string }, onlyIfRowsIn?: string): Prisma.Sql {
  if (onlyIfRowsIn !== undefined && !guardRelation.test(onlyIfRowsIn))
    throw new Error(`not a CTE name: ${onlyIfRowsIn}`);
  const guard = onlyIfRowsIn ? Prisma.sql`WHERE EXISTS (SELECT 1 FROM ${Prisma.raw(onlyIfRowsIn)})` : Prisma.empty;
  // seq, prev_hash and hash are placeholders: the chain trigger overwrites them.
  return Prisma.sql`
    INSERT INTO audit_entries (id, stream, seq, at, actor, actor_kind, action, subject_type, subject_id, task_id, details, content_digest, prev_hash, hash)
    SELECT ${e.id}, ${e.stream}, 0, ${e.at.toISOString()}::timestamptz, ${e.actor}, ${e.actorKind}::"AuditActorKind", ${e.action},
           ${e.subjectType}, ${e.subjectId}, ${e.taskId}, ${JSON.stringify(e.details)}::jsonb, ${e.contentDigest}, '', ''
    ${guard}`;
}

/**
 * Appends one entry, in the caller's transaction: it commits or rolls back
 * with what it records. One statement. Appends to one stream wait for each
 * other (the head row's lock, until commit); to different streams, never.
 * Append after the write the entry records: the caller then already holds
 * the row of the aggregate whose stream this is, so the head's lock adds no
 * wait and no lock order of its own (audit-chain.ts streamFor). A Db is fine
 * for an entry that is its own transaction (a sign-in, a denial).
 */
export async function appendAuditEntry(tx: Tx | Db, input: AuditEntryInput): Promise<AuditEntry> {
  return appendToStream(tx, prepareEntry(input));
}

async function appendToStream(tx: Tx | Db, entry: AuditContent & { contentDigest: string }): Promise<AuditEntry> {
  const rows = await tx.$queryRaw<
    Array<{ seq: number; prev_hash: string; hash: string }>
  >`${insertSql(entry)} RETURNING seq, prev_hash, hash`;
  const linked = rows[0];
  if (!linked) throw new Error("audit_entries insert returned no row");
  return { ...entry, seq: linked.seq, prevHash: linked.prev_hash, hash: linked.hash };
}

/**
 * The append as SQL, for a writer whose change is a single statement (the
 * task CAS of lib/stores/tasks/task-store.ts): put it in that statement's WITH list,
 * `audited AS (${auditEntryInsertSql(entry, { onlyIfRowsIn: "updated" })})`,
 * and the entry is written exactly when the CTE `updated` returned a row,
 * atomically with it, without a transaction of its own.
 */
export function auditEntryInsertSql(input: AuditEntryInput, options: { onlyIfRowsIn?: string } = {}): Prisma.Sql {
  return insertSql(prepareEntry(input), options.onlyIfRowsIn);
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

interface EntryRow {
  id: string;
  stream: string;
  seq: number;
  at: Date;
  actor: string;
  actor_kind: AuditActorKind;
  action: string;
  subject_type: string;
  subject_id: string;
  task_id: string | null;
  details: Record<string, unknown>;
  content_digest: string;
  prev_hash: string;
  hash: string;
}

const entryColumns = Prisma.sql`id, stream, seq, at, actor, actor_kind::text AS actor_kind, action, subject_type, subject_id, task_id, details, content_digest, prev_hash, hash`;

function toEntry(row: EntryRow): AuditEntry {
  return {
    id: row.id,
    stream: row.stream,
    seq: row.seq,
    at: row.at,
    actor: row.actor,
    actorKind: row.actor_kind,
    action: row.action,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    taskId: row.task_id,
    details: row.details,
    contentDigest: row.content_digest,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

export async function getAuditEntry(db: Db | Tx, id: string): Promise<AuditEntry | null> {
  const rows = await db.$queryRaw<EntryRow[]>`SELECT ${entryColumns} FROM audit_entries WHERE id = ${id}`;
  return rows[0] ? toEntry(rows[0]) : null;
}

/**
 * Entries selected by a caller-built tail (`WHERE … ORDER BY … LIMIT …`),
 * for the searches of lib/use-cases/audit/audit-search.ts: one place maps rows to
 * entries. The tail must be built with Prisma.sql, never from raw text.
 */
export async function selectAuditEntries(db: Db | Tx, tail: Prisma.Sql): Promise<AuditEntry[]> {
  const rows = await db.$queryRaw<EntryRow[]>`SELECT ${entryColumns} FROM audit_entries ${tail}`;
  return rows.map(toEntry);
}

const isoInstant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

/** A range of the log: the filters of the export, the console and the API. */
export const AuditRangeSchema = z.strictObject({
  /** Inclusive. */
  from: isoInstant.optional(),
  /** Exclusive. */
  to: isoInstant.optional(),
  task: z.string().min(1).max(128).optional(),
  actor: z.string().min(1).max(256).optional(),
  action: AuditActionSchema.optional(),
});
export type AuditRange = z.output<typeof AuditRangeSchema>;

export interface AuditPage {
  items: AuditEntry[];
  /** Opaque; pass back for the next page. Null on the last page. */
  nextCursor: string | null;
}

/**
 * Entries of a range in time order (then stream and seq), paged by keyset
 * on (at, stream, seq) so a long range costs the same per page.
 */
export async function listAuditEntries(
  db: Db,
  range: AuditRange,
  page: { cursor?: string | null; limit?: number } = {},
): Promise<AuditPage> {
  const limit = Math.min(Math.max(page.limit ?? 100, 1), 1000);
  const conditions: Prisma.Sql[] = [];
  if (range.from) conditions.push(Prisma.sql`at >= ${range.from.toISOString()}::timestamptz`);
  if (range.to) conditions.push(Prisma.sql`at < ${range.to.toISOString()}::timestamptz`);
  if (range.task) conditions.push(Prisma.sql`task_id = ${range.task}`);
  if (range.actor) conditions.push(Prisma.sql`actor = ${range.actor}`);
  if (range.action) conditions.push(Prisma.sql`action = ${range.action}`);
  if (page.cursor) {
    const after = decodeCursor(page.cursor);
    conditions.push(Prisma.sql`(at, stream, seq) > (${after.at}::timestamptz, ${after.stream}, ${after.seq}::int)`);
  }
  const where = conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}` : Prisma.empty;
  const rows = await db.$queryRaw<
    EntryRow[]
  >`SELECT ${entryColumns} FROM audit_entries ${where} ORDER BY at, stream, seq LIMIT ${limit + 1}`;
  const items = rows.slice(0, limit).map(toEntry);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}

/** An audit page's cursor: the last entry's (at, stream, seq). */
const auditPageCursor = keysetCursor([keysetParts.instant, keysetParts.text, keysetParts.integer], {
  notOurs: "not a cursor returned by this API",
});

function encodeCursor(e: AuditEntry): string {
  return auditPageCursor.encode([e.at, e.stream, e.seq]);
}

function decodeCursor(cursor: string): { at: string; stream: string; seq: number } {
  const [at, stream, seq] = auditPageCursor.decode(cursor);
  return { at: at.toISOString(), stream, seq };
}

// ---------------------------------------------------------------------------
// Corrections
// ---------------------------------------------------------------------------

export const AnnotationInputSchema = z.strictObject({
  entry_id: z.string().min(1).max(64),
  note: z.string().trim().min(1).max(2000),
  /** What the entry should have said, field by field; the entry itself is never edited. */
  correction: z.record(z.string(), z.unknown()).optional(),
});
export type AnnotationInput = z.input<typeof AnnotationInputSchema>;

/**
 * A correction of an earlier entry, appended to the same stream and bound to
 * the exact entry by its hash. Allowed under a legal hold: a hold freezes
 * deletion, never the record's growth.
 */
export async function annotateAuditEntry(db: Db, rawInput: AnnotationInput, actor: AuditActor): Promise<AuditEntry> {
  const input = parseOrThrow(AnnotationInputSchema, rawInput);
  const target = await getAuditEntry(db, input.entry_id);
  if (!target) throw new AppError("not_found", `Audit entry ${input.entry_id} does not exist.`);
  const entry = prepareEntry(
    {
      action: "annotation.added",
      actor,
      subject: { type: "audit_entry", id: target.id },
      taskId: target.taskId,
      details: {
        annotates: { id: target.id, stream: target.stream, seq: target.seq, hash: target.hash },
        note: input.note,
        correction: input.correction,
      },
    },
    target.stream,
  );
  return appendToStream(db, entry);
}

// ---------------------------------------------------------------------------
// Verification
// ---------------------------------------------------------------------------

export interface AuditVerification {
  ok: boolean;
  checkedAt: Date;
  streams: number;
  entries: number;
  /** The first break of each broken stream, in stream order. */
  breaks: AuditBreak[];
  /** The first of them: what `npm run audit:verify` names. */
  firstBreak: AuditBreak | null;
}

interface Head {
  lastSeq: number;
  lastHash: string;
}
interface Anchor {
  throughSeq: number;
  hash: string;
  entryId: string;
}

async function readHeads(db: Db, streams?: string[]): Promise<Map<string, Head>> {
  const rows = await db.auditStream.findMany({
    where: streams ? { stream: { in: streams } } : {},
    select: { stream: true, lastSeq: true, lastHash: true },
  });
  return new Map(rows.map((r) => [r.stream, { lastSeq: r.lastSeq, lastHash: r.lastHash }]));
}

async function readAnchors(db: Db, streams?: string[]): Promise<Map<string, Anchor>> {
  const rows = await db.auditAnchor.findMany({ where: streams ? { stream: { in: streams } } : {} });
  return new Map(rows.map((r) => [r.stream, { throughSeq: r.throughSeq, hash: r.hash, entryId: r.entryId }]));
}

function sameHead(a: Head | undefined, b: Head | undefined): boolean {
  return a?.lastSeq === b?.lastSeq && a?.lastHash === b?.lastHash;
}

/**
 * Walks every chain: each entry's fields against its content digest, its
 * hash against (prev_hash, seq, digest), its prev_hash against the entry
 * before, seq without gaps from the stream's start (1, or the retention
 * anchor) to the stream's head. Reads in pages outside any transaction, so
 * the app keeps writing meanwhile; a stream that changed under the walk (a
 * concurrent append or retention cut) is walked once more before a break
 * is reported.
 */
export async function verifyAuditChains(db: Db, options: { pageSize?: number } = {}): Promise<AuditVerification> {
  return verifyStreams(db, undefined, options.pageSize ?? 2000);
}

/**
 * verifyAuditChains over the named streams only (a task's chains: its own,
 * its executions', reviews', checkpoints', alerts'), with the same checks,
 * heads and anchors: what the console's verified badge of one task runs, in
 * time proportional to that task's entries rather than the whole log.
 */
export async function verifyAuditStreams(
  db: Db,
  streams: readonly string[],
  options: { pageSize?: number } = {},
): Promise<AuditVerification> {
  if (streams.length === 0)
    return { ok: true, checkedAt: new Date(), streams: 0, entries: 0, breaks: [], firstBreak: null };
  return verifyStreams(db, [...new Set(streams)].sort(), options.pageSize ?? 2000);
}

async function verifyStreams(db: Db, only: string[] | undefined, pageSize: number): Promise<AuditVerification> {
  const heads = await readHeads(db, only);
  const anchors = await readAnchors(db, only);
  const result = await walkStreams(db, heads, anchors, pageSize, only);
  const broken = result.breaks.map((b) => b.stream);
  if (broken.length > 0) {
    // Re-walk only streams whose head or anchor moved while we read them.
    const [heads2, anchors2] = await Promise.all([readHeads(db, broken), readAnchors(db, broken)]);
    const moved = broken.filter(
      (s) => !sameHead(heads.get(s), heads2.get(s)) || anchors.get(s)?.throughSeq !== anchors2.get(s)?.throughSeq,
    );
    if (moved.length > 0) {
      const again = await walkStreams(db, heads2, anchors2, pageSize, moved);
      result.breaks = [...result.breaks.filter((b) => !moved.includes(b.stream)), ...again.breaks].sort(
        byStreamThenSeq,
      );
    }
  }
  result.breaks.push(...(await checkAnchors(db, anchors)));
  result.breaks.sort(byStreamThenSeq);
  return {
    ok: result.breaks.length === 0,
    checkedAt: new Date(),
    streams: result.streams,
    entries: result.entries,
    breaks: result.breaks,
    firstBreak: result.breaks[0] ?? null,
  };
}

function byStreamThenSeq(a: AuditBreak, b: AuditBreak): number {
  return a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : a.seq - b.seq;
}

async function walkStreams(
  db: Db,
  heads: Map<string, Head>,
  anchors: Map<string, Anchor>,
  pageSize: number,
  only?: string[],
): Promise<{ streams: number; entries: number; breaks: AuditBreak[] }> {
  const breaks: AuditBreak[] = [];
  const seen = new Set<string>();
  let entries = 0;
  let current: StreamVerifier | null = null;
  const finish = (v: StreamVerifier) => {
    const b = v.finish(heads.get(v.stream) ?? null);
    if (b) breaks.push(b);
  };
  const start = (stream: string) => {
    seen.add(stream);
    const anchor = anchors.get(stream);
    return new StreamVerifier(stream, anchor ? { afterSeq: anchor.throughSeq, prevHash: anchor.hash } : undefined);
  };
  let after: { stream: string; seq: number } | null = null;
  for (;;) {
    const filter = only ? Prisma.sql`AND stream IN (${Prisma.join(only)})` : Prisma.empty;
    const rows: EntryRow[] = await db.$queryRaw<EntryRow[]>`
      SELECT ${entryColumns} FROM audit_entries
       WHERE (stream, seq) > (${after?.stream ?? ""}, ${after?.seq ?? -1}::int) ${filter}
       ORDER BY stream, seq LIMIT ${pageSize}`;
    for (const row of rows) {
      if (current?.stream !== row.stream) {
        if (current) finish(current);
        current = start(row.stream);
      }
      current.add(toEntry(row), row.content_digest);
      entries += 1;
    }
    const last = rows[rows.length - 1];
    if (!last || rows.length < pageSize) break;
    after = { stream: last.stream, seq: last.seq };
  }
  if (current) finish(current);
  // Streams whose every entry is gone: the head must not be past the anchor.
  for (const stream of heads.keys()) {
    if (seen.has(stream) || (only && !only.includes(stream))) continue;
    const v = start(stream);
    finish(v);
  }
  return { streams: seen.size, entries, breaks };
}

/** An anchor must match the cut its audit.retention_applied entry recorded (while that entry is still kept). */
async function checkAnchors(db: Db, anchors: Map<string, Anchor>): Promise<AuditBreak[]> {
  if (anchors.size === 0) return [];
  const ids = [...new Set([...anchors.values()].map((a) => a.entryId))];
  const rows = await db.auditEntry.findMany({ where: { id: { in: ids } }, select: { id: true, details: true } });
  const cutsByEntry = new Map(rows.map((r) => [r.id, RetentionCutsSchema.safeParse(r.details).data?.cuts ?? []]));
  const breaks: AuditBreak[] = [];
  for (const [stream, anchor] of anchors) {
    const cuts = cutsByEntry.get(anchor.entryId);
    if (!cuts) continue;
    const cut = cuts.find((c) => c.stream === stream);
    if (cut?.through_seq === anchor.throughSeq && cut.hash === anchor.hash) continue;
    breaks.push({
      stream,
      seq: anchor.throughSeq,
      entryId: anchor.entryId,
      kind: "anchor_mismatch",
      expected: cut ? `seq ${cut.through_seq} hash ${cut.hash}` : `a cut of ${stream}`,
      found: `seq ${anchor.throughSeq} hash ${anchor.hash}`,
      message: `The retention anchor of stream ${stream} is not the cut recorded by entry ${anchor.entryId}.`,
    });
  }
  return breaks;
}

/** The details of an audit.retention_applied entry (written by audit-retention.ts). */
export const RetentionCutsSchema = z.object({
  cuts: z.array(z.object({ stream: z.string(), through_seq: z.number().int(), hash: z.string() })),
});
