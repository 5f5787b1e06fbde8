import { getDb } from "@/lib/db";
import { alertToken } from "@/lib/console/alerts";
import { getAlert } from "@/lib/engine/alert-queries";
import { notFound, requireConsoleSession } from "@/lib/console/json-route";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

/** One alert's change token (version, sightings): the detail page refreshes when it moves. */
export const GET = withProblems(async (_request, { params }: { params: Promise<{ id: string }> }) => {
  await requireConsoleSession("alerts:read");
  const { id } = await params;
  const alert = await getAlert(getDb(), id);
  if (!alert) throw notFound("Alert", id);
  return json({ token: alertToken(alert) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
