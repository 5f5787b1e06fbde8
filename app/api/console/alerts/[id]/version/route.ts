import { dbFor } from "@/lib/db/client";
import { alertToken } from "@/lib/adapters/console/alerts/alerts";
import { getAlert } from "@/lib/use-cases/alerts/alert-queries";
import { notFound, requireConsoleSession } from "@/lib/adapters/console/shared/json-route";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

/** One alert's change token (version, sightings): the detail page refreshes when it moves. */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireConsoleSession("alerts:read");
  const { id } = await params;
  const alert = await getAlert(dbFor(principal), id);
  if (!alert) throw notFound("Alert", id);
  return json({ token: alertToken(alert) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
