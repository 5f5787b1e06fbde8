import { readApiJson, requireApiPrincipal, withFencingToken } from "@/lib/adapters/api/context";
import { executionResourcesFor } from "@/lib/adapters/api/execution-resources";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { requireExecutionReach } from "@/lib/use-cases/authority/require-execution-reach";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * The request is about to leave: from here until an outcome is recorded, the
 * effect may or may not exist. Only the task's current lease may send (its
 * token in the body or as Fencing-Token). Idempotent: a retry under the
 * lease that sent it answers the same SENT.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const db = dbFor(principal);
  await requireExecutionReach(db, principal, id, { drive: true });
  const execution = await markSent(
    db,
    id,
    withFencingToken(await readApiJson(request), request.headers.get("fencing-token")),
    actorOf(principal),
  );
  const [answer] = await executionResourcesFor(db, principal, [execution]);
  return json(answer);
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
