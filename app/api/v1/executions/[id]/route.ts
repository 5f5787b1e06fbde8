import { requireApiPrincipal } from "@/lib/adapters/api/context";
import { executionDetailResourceFor } from "@/lib/adapters/api/execution-resources";
import { dbFor } from "@/lib/db/client";
import { getExecution, listExecutionEvents } from "@/lib/stores/execution-store";
import { requireExecutionReach } from "@/lib/use-cases/authority/require-execution-reach";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** One execution with its events: every status change of every attempt, and who made it. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireExecutionReach(db, principal, id);
  const execution = await getExecution(db, id);
  // Gone between the two reads only if the database was rewritten under us.
  if (!execution) throw new Error(`execution ${id} vanished`);
  return json(await executionDetailResourceFor(db, principal, execution, await listExecutionEvents(db, id)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
