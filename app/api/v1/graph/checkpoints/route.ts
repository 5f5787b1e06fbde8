import { readGraphApiJson, requireApiPrincipal, withFencingToken } from "@/lib/adapters/api/context";
import { graphCheckpointTupleResource, graphPutResultResource } from "@/lib/adapters/api/graph-resources";
import { queryOf } from "@/lib/adapters/http/query";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { dbFor } from "@/lib/db/client";
import { listGraphCheckpoints } from "@/lib/use-cases/graph/list-graph-checkpoints";
import { putGraphCheckpoint } from "@/lib/use-cases/graph/put-graph-checkpoint";

export const dynamic = "force-dynamic";

/** LangGraph's list and getTuple: newest first, with channel values and pending writes; keyset-paged. */
export const GET = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const page = await listGraphCheckpoints(dbFor(principal), principal, queryOf(request.url));
  return json({ items: page.items.map(graphCheckpointTupleResource), next_cursor: page.nextCursor });
});

/**
 * LangGraph's put, fenced by the thread's lease (Fencing-Token). 201 when
 * stored, 200 with replayed=true for a checkpoint already stored with the
 * same content; 422 graph_history_linear for a put from a stale head.
 */
export const POST = withProblems(async (request) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const body = withFencingToken(await readGraphApiJson(request), request.headers.get("fencing-token"));
  const result = await putGraphCheckpoint(dbFor(principal), principal, body);
  return json(graphPutResultResource(result), {
    status: result.replayed ? 200 : 201,
    headers: result.replayed ? { "Idempotent-Replayed": "true" } : {},
  });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
