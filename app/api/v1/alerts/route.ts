import { parseQuery } from "@/lib/api/context";
import { alertResource } from "@/lib/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/api/session-or-bearer";
import { getDb } from "@/lib/db";
import { listAlerts, ListAlertsQuerySchema } from "@/lib/engine/alert-queries";
import { queryOf } from "@/lib/http/query";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/** Alerts newest first, filtered by status, severity, kind and task, keyset-paged: pass next_cursor back as cursor. */
export const GET = withProblems(async (request) => {
  await requireApiOrSessionPrincipal(request, "alerts:read");
  const page = await listAlerts(getDb(), parseQuery(ListAlertsQuerySchema, queryOf(request.url)));
  return json({ items: page.items.map(alertResource), next_cursor: page.nextCursor });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
