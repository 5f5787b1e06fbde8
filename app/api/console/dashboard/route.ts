import { getDb } from "@/lib/db";
import { loadDashboard } from "@/lib/console/dashboard";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** The dashboard's numbers, polled by the page for live updates (session, tasks:read). */
export async function GET(): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("tasks:read");
  if (principal instanceof Response) return principal;
  return Response.json(await loadDashboard(getDb()), { headers: noStore });
}
