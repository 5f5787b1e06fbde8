import { getDb } from "@/lib/db";
import { getTaskVersion } from "@/lib/engine/tasks";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** The current version of one task: the detail page polls it and refreshes when it moves. */
export async function GET(_request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("tasks:read");
  if (principal instanceof Response) return principal;
  const { id } = await context.params;
  const version = await getTaskVersion(getDb(), id);
  if (version === null) return Response.json({ error: `Task ${id} does not exist.` }, { status: 404, headers: noStore });
  return Response.json({ token: String(version), version }, { headers: noStore });
}
