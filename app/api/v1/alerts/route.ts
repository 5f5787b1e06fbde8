import { parseQuery } from "@/lib/adapters/api/context";
import { alertResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { listAlerts, ListAlertsQuerySchema } from "@/lib/use-cases/alerts/alert-queries";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Alerts newest first, filtered by status, severity, kind and task, keyset-paged: pass next_cursor back as cursor. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:read");
  const page = await listAlerts(dbFor(principal), parseQuery(ListAlertsQuerySchema, queryOf(request.url)));
  return json({ items: page.items.map(alertResource), next_cursor: page.nextCursor });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
