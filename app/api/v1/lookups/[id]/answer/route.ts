import { readApiJson, requireApiPrincipal } from "@/lib/adapters/api/context";
import { executionResource } from "@/lib/adapters/api/execution-resources";
import { lookupResource } from "@/lib/adapters/api/tool-resources";
import { getConnectors } from "@/lib/connectors/effects";
import { dbFor } from "@/lib/db/client";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { answerLookup } from "@/lib/use-cases/tools/answer-lookup";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * The claiming worker's answer, under its fencing token: found (with the
 * provider's record), not_found or unknown, with evidence. 409 when the
 * claim is no longer this worker's. The execution is reconciled by it at once.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const db = dbFor(principal);
  const { lookup, reconciled } = await answerLookup(db, id, await readApiJson(request), principal, getConnectors());
  // Opened: the stored request is sealed at rest.
  const execution = await getExecutionRowOrThrow(db, lookup.executionId);
  return json({
    lookup: lookupResource(lookup, execution),
    reconciled: reconciled ? { action: reconciled.action, execution: executionResource(reconciled.execution) } : null,
  });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
