import { getDb } from "@/lib/db";
import { checkpointsToken } from "@/lib/console/checkpoints";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/** The change token of a task's checkpoint pages: moves with the task's version, new checkpoints and restore attempts. */
export async function GET(_request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("checkpoints:read");
  if (principal instanceof Response) return principal;
  const { id } = await context.params;
  const token = await checkpointsToken(getDb(), id);
  if (token === null) return Response.json({ error: `Task ${id} does not exist.` }, { status: 404, headers: noStore });
  return Response.json({ token }, { headers: noStore });
}
