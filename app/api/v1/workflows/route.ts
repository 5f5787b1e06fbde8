import { requireApiPrincipal } from "@/lib/api/context";
import { workflowResource } from "@/lib/api/resources";
import { workflowDefinitions } from "@/lib/engine/workflows";
import { json, otherMethods, withProblems } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/** Every workflow definition this server runs, all versions, with digests, states and edges. */
export const GET = withProblems(async (request) => {
  await requireApiPrincipal(request, "workflows:read");
  return json({ items: workflowDefinitions.map(workflowResource) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
