import { parseQuery } from "@/lib/api/context";
import { AuditExportQuerySchema } from "@/lib/api/audit-resources";
import { requireApiOrSessionPrincipal } from "@/lib/api/session-or-bearer";
import { getDb } from "@/lib/db";
import { exportAuditRange, exportContentTypes } from "@/lib/engine/audit-export";
import { appendAuditEntry } from "@/lib/engine/audit-log";
import { queryOf } from "@/lib/http/query";
import { otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/**
 * A range of the log (from, to, task, actor, action) as JSON Lines or CSV,
 * streamed page by page, with seq, prev_hash and hash on every line so the
 * holder can verify it (POST /api/v1/audit/verify, or offline). Taking a copy
 * out is itself recorded. An error after the first byte can only cut the
 * stream short: the response is then incomplete, never silently truncated
 * into something that looks whole (the transfer ends with an error).
 */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:export");
  const { format, ...range } = parseQuery(AuditExportQuerySchema, queryOf(request.url));
  const db = getDb();
  await appendAuditEntry(db, {
    action: "audit.exported",
    actor: { identity: principal.identity, kind: principal.kind === "agent" ? "agent" : "user" },
    subject: { type: "audit_log", id: range.task ? `task:${range.task}` : "all" },
    taskId: range.task ?? null,
    details: { format, from: range.from?.toISOString(), to: range.to?.toISOString(), task: range.task, actor: range.actor, action: range.action },
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(exportAuditRange(db, range, format), {
    headers: {
      "Content-Type": exportContentTypes[format],
      "Content-Disposition": `attachment; filename="verity-audit-${stamp}.${format}"`,
      "Cache-Control": "no-store",
    },
  });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
