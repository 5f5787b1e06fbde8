import { parseQuery } from "@/lib/adapters/api/context";
import { AuditEntriesQuerySchema, auditEntryResource } from "@/lib/adapters/api/audit-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Entries of a range (from, to, task, actor, action), oldest first, keyset-paged: pass `next_cursor` back as `cursor`. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "audit:read");
  const { cursor, limit, ...range } = parseQuery(AuditEntriesQuerySchema, queryOf(request.url));
  const page = await listAuditEntries(dbFor(principal), range, { cursor, limit });
  return json({ items: page.items.map(auditEntryResource), next_cursor: page.nextCursor });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
