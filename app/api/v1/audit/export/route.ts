import { parseQuery } from "@/lib/adapters/api/context";
import { AuditSearchExportQuerySchema } from "@/lib/adapters/api/audit-search-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { exportContentTypes } from "@/lib/use-cases/audit/audit-export";
import { assertSearchWindow, exportAuditSearch } from "@/lib/use-cases/audit/audit-search";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { queryOf } from "@/lib/adapters/http/query";
import { otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { readBodyBytes } from "@/lib/adapters/http/body";
import { AppError } from "@/lib/core/errors";

export const dynamic = "force-dynamic";

/**
 * A range of the log (from, to, task, actor, action, and every other filter
 * of GET /api/v1/audit/search) as JSON Lines or CSV,
 * streamed page by page, with seq, prev_hash and hash on every line so the
 * holder can verify it (POST /api/v1/audit/verify, or offline). Taking a copy
 * out is itself recorded. An error after the first byte can only cut the
 * stream short: the response is then incomplete, never silently truncated
 * into something that looks whole (the transfer ends with an error).
 *
 * Because it writes (the audit entry), the console takes an export with POST
 * (its Export buttons post a form): the session cookie is SameSite=Lax, so a
 * browser sends it with a cross-site link or redirect (a GET), never with a
 * cross-site POST, and requireApiOrSessionPrincipal checks a session POST's
 * Origin besides. GET stays for bearer tokens, which no other site can make a
 * browser send: scripts keep `curl -H "Authorization: Bearer …" …/export?…`.
 */
export const GET = withProblems(async (request) => {
  if (request.headers.get("authorization") === null)
    throw new AppError(
      "forbidden",
      "An export with the console session is taken with POST (the Export buttons on /audit), so that a link on another site cannot take one in your name; with an API token, GET works.",
    );
  return exportResponse(request, queryOf(request.url));
});

/** The filters as form fields (the console's form) or, with no form body, in the query string. */
export const POST = withProblems(async (request) => {
  const isForm = (request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded");
  return exportResponse(request, isForm ? await formFieldsOf(request) : queryOf(request.url));
});

async function formFieldsOf(request: Request): Promise<Record<string, string>> {
  const text = new TextDecoder().decode(await readBodyBytes(request, 16 * 1024));
  const fields: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(text)) if (value !== "") fields[key] = value;
  return fields;
}

async function exportResponse(request: Request, query: Record<string, string>): Promise<Response> {
  const principal = await requireApiOrSessionPrincipal(request, "audit:export");
  const { format, ...range } = parseQuery(AuditSearchExportQuerySchema, query);
  assertSearchWindow(range);
  const db = dbFor(principal);
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
      // The tenant in the name: an export holds one tenant's chain, and a file kept beside others says whose.
      "Content-Disposition": `attachment; filename="verity-audit-${principal.tenantId}-${stamp}.${format}"`,
      "Cache-Control": "no-store",
    },
  });
}

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
