import { requireApiPrincipal } from "@/lib/adapters/api/context";
import { workflowResource } from "@/lib/adapters/api/workflow-resources";
import { workflowDefinitions } from "@/lib/model/workflows";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/** Every workflow definition this server runs, all versions, with digests, states and edges. */
export const GET = withProblems(async (request) => {
  await requireApiPrincipal(request, "workflows:read");
  return json({ items: workflowDefinitions.map(workflowResource) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
