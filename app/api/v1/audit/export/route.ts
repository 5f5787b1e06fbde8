import { parseQuery } from "@/lib/adapters/api/context";
import { AuditSearchExportQuerySchema } from "@/lib/adapters/api/audit-search-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { getDb } from "@/lib/db/client";
import { exportContentTypes } from "@/lib/use-cases/audit/audit-export";
import { assertSearchWindow, exportAuditSearch } from "@/lib/use-cases/audit/audit-search";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { queryOf } from "@/lib/adapters/http/query";
import { otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * A range of the log (from, to, task, actor, action, and every other filter
 * of GET /api/v1/audit/search) as JSON Lines or CSV,
 * streamed page by page, with seq, prev_hash and hash on every line so the
 * holder can verify it (POST /api/v1/audit/verify, or offline). Taking a copy
 * out is itself recorded. An error after the first byte can only cut the
 * stream short: the response is then incomplete, never silently truncated
 * into something that looks whole (the transfer ends with an error).
 */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:export");
  const { format, ...range } = parseQuery(AuditSearchExportQuerySchema, queryOf(request.url));
  assertSearchWindow(range);
  const db = getDb();
  await appendAuditEntry(db, {
    action: "audit.exported",
    actor: { identity: principal.identity, kind: principal.kind === "agent" ? "agent" : "user" },
    subject: { type: "audit_log", id: range.task ? `task:${range.task}` : "all" },
    taskId: range.task ?? null,
    details: {
      format,
      from: range.from?.toISOString(),
      to: range.to?.toISOString(),
      task: range.task,
      actor: range.actor,
      action: range.action,
      kind: range.kind?.join(","),
      status: range.status,
      tool: range.tool,
      idempotency_key: range.idempotency_key,
      execution: range.execution,
      scope: range.tool || range.idempotency_key || range.execution ? range.scope : undefined,
    },
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(exportAuditSearch(db, range, format), {
    headers: {
      "Content-Type": exportContentTypes[format],
      "Content-Disposition": `attachment; filename="verity-audit-${stamp}.${format}"`,
      "Cache-Control": "no-store",
    },
  });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
