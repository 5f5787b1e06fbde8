import { z } from "zod";
import { csvCell, formulaStart } from "@/lib/core/csv";
import type { Db } from "@/lib/db/client";
import {
  auditActorKinds,
  StreamVerifier,
  type AuditActorKind,
  type AuditBreakKind,
  type AuditLink,
} from "@/lib/model/audit/audit-chain";
import { listAuditEntries, type AuditEntry, type AuditRange } from "@/lib/stores/audit-log";

/**
 * Exports of a range of the log as JSON Lines or CSV, with every field the
 * hash covers plus seq, prev_hash and hash, so that whoever holds an export
 * can check it without the database: each line's hash is recomputed from
 * its fields (docs/audit.md gives the recipe), and consecutive entries of a
 * stream must link. A filtered export has gaps; they are counted, not
 * refused. `verifyAuditExport` is that third party's check.
 */

export const auditExportFormats = ["jsonl", "csv"] as const;
export type AuditExportFormat = (typeof auditExportFormats)[number];

export const exportColumns = [
  "stream",
  "seq",
  "id",
  "at",
  "actor",
  "actor_kind",
  "action",
  "subject_type",
  "subject_id",
  "task_id",
  "details",
  "prev_hash",
  "hash",
] as const satisfies ReadonlyArray<keyof AuditExportRecord>;

export const exportContentTypes: Record<AuditExportFormat, string> = {
  jsonl: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

/** One entry as exported (and as the API returns it): every field the hash covers, and the chain. */
export interface AuditExportRecord {
  stream: string;
  seq: number;
  id: string;
  at: string;
  actor: string;
  actor_kind: AuditActorKind;
  action: string;
  subject_type: string;
  subject_id: string;
  task_id: string | null;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

export function exportRecordOf(e: AuditEntry): AuditExportRecord {
  return {
    stream: e.stream,
    seq: e.seq,
    id: e.id,
    at: e.at.toISOString(),
    actor: e.actor,
    actor_kind: e.actorKind,
    action: e.action,
    subject_type: e.subjectType,
    subject_id: e.subjectId,
    task_id: e.taskId,
    details: e.details,
    prev_hash: e.prevHash,
    hash: e.hash,
  };
}

export function toJsonLine(e: AuditEntry): string {
  return `${JSON.stringify(exportRecordOf(e))}\n`;
}

/** A cell the export prefixed with a quote (lib/core/csv.ts) gives back the bytes the hash covers. */
function restoreFormulaCell(cell: string): string {
  return cell.startsWith("'") && formulaStart.test(cell.slice(1)) ? cell.slice(1) : cell;
}

export const csvHeader = `${exportColumns.join(",")}\n`;

export function toCsvRow(e: AuditEntry): string {
  const record = exportRecordOf(e);
  return `${exportColumns.map((c) => csvCell(record[c])).join(",")}\n`;
}

/**
 * The export as a byte stream that reads one page of the range each time the
 * consumer asks for more: memory stays flat however long the range, and a
 * client that stops reading stops the queries.
 */
export function exportAuditRange(
  db: Db,
  range: AuditRange,
  format: AuditExportFormat,
  options: { pageSize?: number } = {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cursor: string | null = null;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started && format === "csv") controller.enqueue(encoder.encode(csvHeader));
      if (started && cursor === null) return controller.close();
      started = true;
      const page = await listAuditEntries(db, range, { cursor, limit: options.pageSize ?? 500 });
      const text = page.items.map(format === "csv" ? toCsvRow : toJsonLine).join("");
      if (text) controller.enqueue(encoder.encode(text));
      cursor = page.nextCursor;
      if (cursor === null) controller.close();
    },
  });
}

// ---------------------------------------------------------------------------
// Verification of an export
// ---------------------------------------------------------------------------

export interface ExportProblem {
  /** 1-based line of the file where the record starts. */
  line: number;
  entryId: string | null;
  stream: string | null;
  seq: number | null;
  kind: AuditBreakKind | "unreadable";
  message: string;
  expected?: string;
  found?: string;
}

export interface ExportVerification {
  ok: boolean;
  format: AuditExportFormat;
  records: number;
  streams: number;
  /** Pairs of consecutive entries of a stream whose link was checked. */
  links: number;
  /** Places where a stream's seq jumps: entries the filter left out. */
  gaps: number;
  problems: ExportProblem[];
  firstProblem: ExportProblem | null;
}

const ExportRecordSchema = z.object({
  stream: z.string().min(1),
  seq: z.coerce.number().int().min(1),
  id: z.string().min(1),
  at: z.iso.datetime({ offset: true }),
  actor: z.string(),
  actor_kind: z.enum(auditActorKinds),
  action: z.string().min(1),
  subject_type: z.string().min(1),
  subject_id: z.string(),
  task_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  prev_hash: z.string().regex(/^[0-9a-f]{64}$/),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});

interface ParsedRecord {
  line: number;
  link?: AuditLink;
  error?: string;
}

function linkOf(raw: unknown): AuditLink | string {
  const parsed = ExportRecordSchema.safeParse(raw);
  if (!parsed.success)
    return parsed.error.issues.map((i) => `${i.path.join(".") || "record"}: ${i.message}`).join("; ");
  const r = parsed.data;
  return {
    id: r.id,
    stream: r.stream,
    seq: r.seq,
    at: new Date(r.at),
    actor: r.actor,
    actorKind: r.actor_kind,
    action: r.action,
    subjectType: r.subject_type,
    subjectId: r.subject_id,
    taskId: r.task_id,
    details: r.details,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

function parseJsonLines(text: string): ParsedRecord[] {
  const out: ParsedRecord[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      out.push({ line: i + 1, error: "not a JSON object" });
      return;
    }
    const link = linkOf(value);
    out.push(typeof link === "string" ? { line: i + 1, error: link } : { line: i + 1, link });
  });
  return out;
}

/** RFC 4180 records with the line each starts on (a quoted field may span lines). */
export function parseCsv(text: string): Array<{ line: number; cells: string[] }> {
  const records: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let dirty = false;
  const endRecord = () => {
    if (dirty || cells.length > 0) records.push({ line: recordLine, cells: [...cells, cell] });
    cells = [];
    cell = "";
    dirty = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === "\n") line++;
        cell += c;
      }
      continue;
    }
    if (c === '"') {
      quoted = true;
      dirty = true;
    } else if (c === ",") {
      cells.push(cell);
      cell = "";
      dirty = true;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      endRecord();
      line++;
      recordLine = line;
    } else {
      cell += c;
      dirty = true;
    }
  }
  endRecord();
  return records;
}

function parseCsvRecords(text: string): ParsedRecord[] {
  const [header, ...rows] = parseCsv(text);
  if (!header || header.cells.join(",") !== exportColumns.join(",")) {
    return [{ line: 1, error: `the header must be ${exportColumns.join(",")}` }];
  }
  return rows.map(({ line, cells }) => {
    if (cells.length !== exportColumns.length)
      return { line, error: `${cells.length} fields, expected ${exportColumns.length}` };
    const raw: Record<string, unknown> = Object.fromEntries(
      exportColumns.map((c, i) => [c, restoreFormulaCell(cells[i] ?? "")]),
    );
    raw.task_id = raw.task_id === "" ? null : raw.task_id;
    try {
      raw.details = JSON.parse(String(raw.details));
    } catch {
      return { line, error: "details: not JSON" };
    }
    const link = linkOf(raw);
    return typeof link === "string" ? { line, error: link } : { line, link };
  });
}

export function detectExportFormat(text: string): AuditExportFormat {
  return text.trimStart().startsWith("{") ? "jsonl" : "csv";
}

/**
 * Checks an export as a third party would: every line's hash from its own
 * fields, and the link between consecutive entries of each stream. Names the
 * line of each problem (the first per stream). `contiguous`: the export is
 * known to hold whole runs of its streams (unfiltered but for task or time),
 * so a seq gap is a deleted line, not a filtered one.
 */
export function verifyAuditExport(
  text: string,
  options: { format?: AuditExportFormat; contiguous?: boolean } = {},
): ExportVerification {
  const format = options.format ?? detectExportFormat(text);
  const parsed = format === "csv" ? parseCsvRecords(text) : parseJsonLines(text);
  const problems: ExportProblem[] = [];
  const byStream = new Map<string, Array<{ line: number; link: AuditLink }>>();
  for (const record of parsed) {
    if (!record.link) {
      problems.push({
        line: record.line,
        entryId: null,
        stream: null,
        seq: null,
        kind: "unreadable",
        message: `line ${record.line}: ${record.error}`,
      });
      continue;
    }
    const list = byStream.get(record.link.stream) ?? [];
    list.push({ line: record.line, link: record.link });
    byStream.set(record.link.stream, list);
  }
  let links = 0;
  let gaps = 0;
  for (const [stream, list] of byStream) {
    // Export order is by time; a chain is checked in seq order.
    list.sort((a, b) => a.link.seq - b.link.seq || a.line - b.line);
    const first = list[0];
    if (!first) continue;
    // The first entry's predecessor is not in the export: its prev_hash is taken as given, its own hash is checked.
    const verifier = new StreamVerifier(
      stream,
      { afterSeq: first.link.seq - 1, prevHash: first.link.prevHash },
      !options.contiguous,
    );
    let previousSeq: number | null = null;
    for (const { line, link } of list) {
      verifier.add(link);
      if (verifier.firstBreak) {
        const b = verifier.firstBreak;
        problems.push({
          line,
          entryId: b.entryId,
          stream,
          seq: b.seq,
          kind: b.kind,
          expected: b.expected,
          found: b.found,
          message: `line ${line}: ${b.message}`,
        });
        break;
      }
      if (previousSeq !== null) {
        if (link.seq === previousSeq + 1) links += 1;
        else gaps += 1;
      }
      previousSeq = link.seq;
    }
  }
  problems.sort((a, b) => a.line - b.line);
  return {
    ok: problems.length === 0,
    format,
    records: parsed.length,
    streams: byStream.size,
    links,
    gaps,
    problems,
    firstProblem: problems[0] ?? null,
  };
}
