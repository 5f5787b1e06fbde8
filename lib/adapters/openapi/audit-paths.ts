/** The audit part of the OpenAPI document: entries, search, export, and verifying the log or an export. */
import { z } from "zod";
import {
  jsonContent,
  type JsonSchema,
  problems,
  queryParameters,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import {
  AnnotationRequestSchema,
  AuditEntriesQuerySchema,
  AuditEntryResourceSchema,
  AuditVerificationResourceSchema,
  ExportVerificationResourceSchema,
  ExportVerifyQuerySchema,
} from "@/lib/adapters/api/audit-resources";
import {
  AuditSearchExportQuerySchema,
  AuditSearchPageSchema,
  AuditSearchQuerySchema,
} from "@/lib/adapters/api/audit-search-resources";

const auditReaders =
  "Bearer token, or the console session (people); permission audit:read (auditors, engineers, admins).";

export const auditResponseSchemas: SchemaEntries = [
  ["AuditEntry", AuditEntryResourceSchema],
  ["AuditEntryPage", z.object({ items: z.array(AuditEntryResourceSchema), next_cursor: z.string().nullable() })],
  ["AuditVerification", AuditVerificationResourceSchema],
  ["AuditSearchPage", AuditSearchPageSchema],
  ["AuditExportVerification", ExportVerificationResourceSchema],
];

export const auditRequestSchemas: SchemaEntries = [["AnnotationRequest", AnnotationRequestSchema]];

export function auditPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/audit/entries": {
      get: {
        tags: ["audit"],
        operationId: "listAuditEntries",
        summary: "Audit entries of a range, oldest first, keyset-paged",
        description: `${auditReaders} Filter by from (inclusive), to (exclusive), task, actor, action; pass next_cursor back as cursor. Each entry carries every field its hash covers.`,
        parameters: queryParameters(AuditEntriesQuerySchema),
        responses: {
          200: { description: "One page.", content: jsonContent(ref("AuditEntryPage")) },
          ...problems(400, 401, 403),
        },
      },
    },
    "/api/v1/audit/entries/{id}/annotations": {
      post: {
        tags: ["audit"],
        operationId: "annotateAuditEntry",
        summary: "Append a person's correction of an entry; allowed under a legal hold",
        description:
          "Permission audit:annotate (operators, auditors, admins), and a person: the console session (a POST from the console's own origin) or a person's token; an agent's token is 403 whatever its role, since annotations are people's corrections of the record. " +
          "The entry is never edited: an annotation.added entry is appended to its chain, naming it by id, seq and hash, with the note and the corrected fields. " +
          "A legal hold does not stop it (a hold freezes deletion, not the record's growth); it is verified, searched and exported like any entry. " +
          "400 names the field (a blank note, an unknown field); 404 when no entry has this id (or retention removed it).",
        parameters: [
          {
            name: "id",
            in: "path",
            required: true,
            schema: { type: "string" },
            description: "The audit entry's id (aud_…).",
          },
        ],
        requestBody: { required: true, content: jsonContent(ref("AnnotationRequest")) },
        responses: {
          201: { description: "The annotation, as stored and linked.", content: jsonContent(ref("AuditEntry")) },
          ...problems(400, 401, 403, 404, 413, 415),
        },
      },
    },
    "/api/v1/audit/search": {
      get: {
        tags: ["audit"],
        operationId: "searchAuditEntries",
        summary: "Search the log across tasks, keyset-paged either way",
        description:
          `${auditReaders} Filters combine with AND: from (inclusive), to (exclusive), task, actor, action, kind, status (a move to or from it), ` +
          "and tool / idempotency_key / execution, resolved through the executions table to the entries about those executions " +
          "(their own chain, and reviews and alerts naming them), or with scope=task to every entry of their tasks. Pass next_cursor back as cursor, with the same order.",
        parameters: queryParameters(AuditSearchQuerySchema),
        responses: {
          200: { description: "One page.", content: jsonContent(ref("AuditSearchPage")) },
          ...problems(400, 401, 403),
        },
      },
    },
    "/api/v1/audit/export": {
      get: {
        tags: ["audit"],
        operationId: "exportAudit",
        summary: "A range of the log as JSON Lines or CSV, streamed; the export itself is recorded",
        description:
          "Permission audit:export, with a bearer token (a console session is refused here: it exports with POST). Every line has seq, prev_hash and hash: verify the file with POST /api/v1/audit/verify or offline (docs/audit.md). " +
          "An error after the first byte ends the transfer with an error, never a short file that looks whole.",
        parameters: queryParameters(AuditSearchExportQuerySchema),
        responses: {
          200: {
            description: "The entries, one per line (CSV: with a header row).",
            headers: { "Content-Disposition": { schema: { type: "string" } } },
            content: {
              "application/x-ndjson": { schema: { type: "string" } },
              "text/csv": { schema: { type: "string" } },
            },
          },
          ...problems(400, 401, 403),
        },
      },
      post: {
        tags: ["audit"],
        operationId: "exportAuditByPost",
        summary: "The same export, the filters as form fields: how the console takes one",
        description:
          "Permission audit:export, with a bearer token or the console session (from the console's own origin). The filters as application/x-www-form-urlencoded fields, or in the query string without a body. Every line has seq, prev_hash and hash: verify the file with POST /api/v1/audit/verify or offline (docs/audit.md). " +
          "An error after the first byte ends the transfer with an error, never a short file that looks whole.",
        parameters: queryParameters(AuditSearchExportQuerySchema),
        responses: {
          200: {
            description: "The entries, one per line (CSV: with a header row).",
            headers: { "Content-Disposition": { schema: { type: "string" } } },
            content: {
              "application/x-ndjson": { schema: { type: "string" } },
              "text/csv": { schema: { type: "string" } },
            },
          },
          ...problems(400, 401, 403, 413),
        },
      },
    },
    "/api/v1/audit/verify": {
      get: {
        tags: ["audit"],
        operationId: "verifyAuditLog",
        summary: "Walk every chain in the database now",
        description: `${auditReaders} 200 either way: ok and first_break are the answer.`,
        responses: {
          200: { description: "The verification.", content: jsonContent(ref("AuditVerification")) },
          ...problems(401, 403),
        },
      },
      post: {
        tags: ["audit"],
        operationId: "verifyAuditExport",
        summary: "Verify an export sent back as the body (up to 10 MiB)",
        description: `${auditReaders} Every line's hash and every link between consecutive entries of a stream, with the line of each problem. contiguous=true when the export was not filtered by actor or action: a gap is then a deleted line.`,
        parameters: queryParameters(ExportVerifyQuerySchema),
        requestBody: {
          required: true,
          content: {
            "application/x-ndjson": { schema: { type: "string" } },
            "text/csv": { schema: { type: "string" } },
          },
        },
        responses: {
          200: { description: "The verification.", content: jsonContent(ref("AuditExportVerification")) },
          ...problems(400, 401, 403, 413, 415),
        },
      },
    },
  };
}
