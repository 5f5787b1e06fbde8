import { parseQuery } from "@/lib/adapters/api/context";
import {
  auditVerificationResource,
  exportVerificationResource,
  ExportVerifyQuerySchema,
} from "@/lib/adapters/api/audit-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { verifyAuditExport, type AuditExportFormat } from "@/lib/use-cases/audit/audit-export";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { AppError } from "@/lib/core/errors";
import { readBodyBytes } from "@/lib/adapters/http/body";
import { validationError } from "@/lib/adapters/http/problem";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Every chain in the database, walked now. 200 either way: `ok` and `first_break` are the answer. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:read");
  return json(auditVerificationResource(await verifyAuditChains(dbFor(principal))));
});

/**
 * Larger than an API body (VERITY_MAX_BODY_BYTES) on purpose: an export is
 * data to check, not a command. Bigger files verify offline with
 * `npm run audit:verify -- --export <file>`.
 */
const maxExportBytes = 10 * 1024 * 1024;

const formatByMediaType: Record<string, AuditExportFormat> = {
  "application/x-ndjson": "jsonl",
  "application/jsonl": "jsonl",
  "application/jsonlines": "jsonl",
  "text/csv": "csv",
};

/**
 * An export sent back (the body, as GET /api/v1/audit/export produced it):
 * every line's hash and every link between consecutive entries, with the
 * line of each problem. `?contiguous=true` when the export was not filtered
 * by actor or action, so that a missing line counts as a deletion.
 */
export const POST = withProblems(async (request) => {
  await requireApiOrSessionPrincipal(request, "audit:read");
  const { contiguous } = parseQuery(ExportVerifyQuerySchema, queryOf(request.url));
  const mediaType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const format = formatByMediaType[mediaType];
  if (!format) {
    throw new AppError(
      "unsupported_media_type",
      `Send the export as application/x-ndjson or text/csv${mediaType ? `, not ${mediaType}` : ""}.`,
      {
        errors: [{ field: "Content-Type", message: "must be application/x-ndjson or text/csv" }],
      },
    );
  }
  const bytes = await readBodyBytes(request, maxExportBytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw validationError([{ field: "", message: "the export is not valid UTF-8" }]);
  }
  if (text.trim() === "") throw validationError([{ field: "", message: "the export is empty" }]);
  return json(exportVerificationResource(verifyAuditExport(text, { format, contiguous })));
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
