import { getDb } from "@/lib/db";
import { alertToken } from "@/lib/console/alerts";
import { getAlert } from "@/lib/engine/alert-queries";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** One alert's change token (version, sightings): the detail page refreshes when it moves. */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("alerts:read");
  if (principal instanceof Response) return principal;
  const alert = await getAlert(getDb(), (await params).id);
  if (!alert) return Response.json({ error: "No such alert." }, { status: 404, headers: noStore });
  return Response.json({ token: alertToken(alert) }, { headers: noStore });
}
