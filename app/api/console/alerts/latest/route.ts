import { getDb } from "@/lib/db";
import { alertsToken } from "@/lib/console/alerts";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** The alerts centre's change token: any alert changed, or a monitor pass finished. */
export async function GET(): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("alerts:read");
  if (principal instanceof Response) return principal;
  return Response.json({ token: await alertsToken(getDb()) }, { headers: noStore });
}
