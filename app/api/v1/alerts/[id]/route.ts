import { alertDetailResource } from "@/lib/adapters/api/alert-resources";
import { requireApiOrSessionPrincipal } from "@/lib/adapters/api/session-or-bearer";
import { dbFor } from "@/lib/db/client";
import { alertHistory, getAlertOrThrow } from "@/lib/use-cases/alerts/alert-queries";
import { etagOf } from "@/lib/adapters/http/preconditions";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** One alert with its evidence and its history (its audit entries); ETag is the alert's version. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiOrSessionPrincipal(request, "alerts:read");
  const { id } = await params;
  const db = dbFor(principal);
  const alert = await getAlertOrThrow(db, id);
  return json(alertDetailResource(alert, await alertHistory(db, id)), { headers: { ETag: etagOf(alert.version) } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
