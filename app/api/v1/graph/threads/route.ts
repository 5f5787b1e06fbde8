import { parseFencingTokenHeader, readApiJson, requireApiPrincipal } from "@/lib/adapters/api/context";
import { graphThreadResource } from "@/lib/adapters/api/graph-resources";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { dbFor } from "@/lib/db/client";
import { deleteGraphThread } from "@/lib/use-cases/graph/delete-graph-thread";
import { ensureGraphThread } from "@/lib/use-cases/graph/ensure-graph-thread";

export const dynamic = "force-dynamic";

/** Opens a LangGraph thread: its Verity task, created on first use (201), the same one after (200). */
export const POST = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:create");
  const result = await ensureGraphThread(dbFor(principal), principal, await readApiJson(request));
  return json(graphThreadResource(result), { status: result.created ? 201 : 200 });
});

/** LangGraph's deleteThread (?namespace=&thread_id=): the thread's checkpoints and writes go; its task and history stay. */
export const DELETE = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const fencingToken = parseFencingTokenHeader(request.headers.get("fencing-token"));
  const result = await deleteGraphThread(dbFor(principal), principal, {
    ...queryOf(request.url),
    ...(fencingToken ? { fencing_token: fencingToken } : {}),
  });
  return json({ task_id: result.taskId, deleted: { checkpoints: result.checkpoints, writes: result.writes } });
});

export const { GET, PUT, PATCH } = otherMethods(["POST", "DELETE"]);
