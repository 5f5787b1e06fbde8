import { readGraphApiJson, requireApiPrincipal, withFencingToken } from "@/lib/adapters/api/context";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { dbFor } from "@/lib/db/client";
import { putGraphWrites } from "@/lib/use-cases/graph/put-graph-writes";

export const dynamic = "force-dynamic";

/** LangGraph's putWrites: a graph task's pending writes against a stored checkpoint, fenced by the thread's lease. */
export const POST = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const body = withFencingToken(await readGraphApiJson(request), request.headers.get("fencing-token"));
  const result = await putGraphWrites(dbFor(principal), principal, body);
  return json({ task_id: result.taskId, written: result.written, task_version: result.taskVersion }, { status: 201 });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
