import { getDb } from "@/lib/db";
import { listTasks } from "@/lib/engine/tasks";
import { noStore, sessionPrincipalOrResponse } from "@/lib/console/json-route";

/**
 * A token that changes whenever any task is created or changed: every write
 * moves `updated_at`, so the newest task's id and version identify the
 * current state of the list. One index read, cheap to poll.
 */
export async function GET(): Promise<Response> {
  const principal = await sessionPrincipalOrResponse("tasks:read");
  if (principal instanceof Response) return principal;
  const { items } = await listTasks(getDb(), { limit: 1 });
  const newest = items[0];
  return Response.json({ token: newest ? `${newest.id}@${newest.version}` : "empty" }, { headers: noStore });
}
