import { z } from "zod";
import { auditActions, auditActorKinds } from "@/lib/model/audit/audit-chain";
import { auditExportFormats, exportRecordOf, type ExportVerification } from "@/lib/use-cases/audit/audit-export";
import { AuditRangeSchema, type AuditEntry, type AuditVerification } from "@/lib/stores/audit-log";
import { AddAnnotationInputSchema } from "@/lib/use-cases/audit/annotate-audit-entry";

/**
 * The wire shapes of the audit routes (app/api/v1/audit/*), snake_case like
 * the rest of the API. An entry carries every field its hash covers, so a
 * client can check it the way audit-export.ts does.
 */

export const AuditEntriesQuerySchema = AuditRangeSchema.extend({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const ExportVerifyQuerySchema = z.strictObject({
  /** The export holds whole runs of its streams: a seq gap is a deleted line. */
  contiguous: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
});

export const AuditEntryResourceSchema = z.object({
  id: z.string(),
  stream: z.string().meta({ description: "The chain the entry belongs to: task:<id>, auth or system." }),
  seq: z.int().min(1),
  at: z.iso.datetime(),
  actor: z.string(),
  actor_kind: z.enum(auditActorKinds),
  action: z.enum(auditActions),
  subject_type: z.string(),
  subject_id: z.string(),
  task_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  prev_hash: z.string(),
  hash: z.string(),
});
export type AuditEntryResource = z.infer<typeof AuditEntryResourceSchema>;

export function auditEntryResource(e: AuditEntry): AuditEntryResource {
  // The API's entry is the export's record: one shape to verify, wherever it came from.
  return { ...exportRecordOf(e), action: e.action as AuditEntryResource["action"] };
}

const BreakSchema = z.object({
  stream: z.string(),
  seq: z.int(),
  entry_id: z.string().nullable(),
  kind: z.string(),
  expected: z.string(),
  found: z.string(),
  message: z.string(),
});

export const AuditVerificationResourceSchema = z.object({
  ok: z.boolean(),
  checked_at: z.iso.datetime(),
  streams: z.int(),
  entries: z.int(),
  first_break: BreakSchema.nullable(),
  breaks: z.array(BreakSchema),
});

export function auditVerificationResource(v: AuditVerification): z.infer<typeof AuditVerificationResourceSchema> {
  const wire = (b: AuditVerification["breaks"][number]) => ({
    stream: b.stream,
    seq: b.seq,
    entry_id: b.entryId,
    kind: b.kind,
    expected: b.expected,
    found: b.found,
    message: b.message,
  });
  return {
    ok: v.ok,
    checked_at: v.checkedAt.toISOString(),
    streams: v.streams,
    entries: v.entries,
    first_break: v.firstBreak ? wire(v.firstBreak) : null,
    breaks: v.breaks.map(wire),
  };
}

const ExportProblemSchema = z.object({
  line: z.int(),
  entry_id: z.string().nullable(),
  stream: z.string().nullable(),
  seq: z.int().nullable(),
  kind: z.string(),
  message: z.string(),
});

export const ExportVerificationResourceSchema = z.object({
  ok: z.boolean(),
  format: z.enum(auditExportFormats),
  records: z.int(),
  streams: z.int(),
  links: z.int(),
  gaps: z.int(),
  first_problem: ExportProblemSchema.nullable(),
  problems: z.array(ExportProblemSchema),
});

export function exportVerificationResource(v: ExportVerification): z.infer<typeof ExportVerificationResourceSchema> {
  const wire = (p: ExportVerification["problems"][number]) => ({
    line: p.line,
    entry_id: p.entryId,
    stream: p.stream,
    seq: p.seq,
    kind: p.kind,
    message: p.message,
  });
  return {
    ok: v.ok,
    format: v.format,
    records: v.records,
    streams: v.streams,
    links: v.links,
    gaps: v.gaps,
    first_problem: v.firstProblem ? wire(v.firstProblem) : null,
    problems: v.problems.map(wire),
  };
}

/** POST /api/v1/audit/entries/{id}/annotations: the entry is the path's; the body says what is wrong and what is right. */
export const AnnotationRequestSchema = AddAnnotationInputSchema.pick({ note: true, correction: true });
