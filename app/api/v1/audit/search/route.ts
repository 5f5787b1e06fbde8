import { parseQuery } from "@/lib/adapters/api/context";
import { auditEntryResource } from "@/lib/adapters/api/audit-resources";
import { AuditSearchQuerySchema } from "@/lib/adapters/api/audit-search-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { searchAuditEntries } from "@/lib/use-cases/audit/audit-search";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * The log searched across tasks: time window, actor, task, action or kind,
 * status, and tool / idempotency key / execution id resolved through the
 * executions table (docs/audit.md, "Search"). Keyset-paged either way.
 */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:read");
  const { cursor, limit, order, ...query } = parseQuery(AuditSearchQuerySchema, queryOf(request.url));
  const page = await searchAuditEntries(dbFor(principal), query, { cursor, limit, order });
  return json({
    items: page.items.map(auditEntryResource),
    next_cursor: page.nextCursor,
    matched_executions: page.matchedExecutions,
  });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
