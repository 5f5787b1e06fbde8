import { requireApiPrincipal } from "@/lib/adapters/api/context";
import { executionDetailResource } from "@/lib/adapters/api/execution-resources";
import { getDb } from "@/lib/db/client";
import { getExecution, listExecutionEvents } from "@/lib/stores/execution-store";
import { AppError } from "@/lib/core/errors";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** One execution with its events: every status change of every attempt, and who made it. */
export const GET = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = getDb();
  const execution = await getExecution(db, id);
  if (!execution) throw new AppError("not_found", `Execution ${id} does not exist.`);
  return json(executionDetailResource(execution, await listExecutionEvents(db, id)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
