import { readOptionalApiJson, requireApiPrincipal } from "@/lib/adapters/api/context";
import { lookupResource } from "@/lib/adapters/api/tool-resources";
import { dbFor } from "@/lib/db/client";
import { claimLookup } from "@/lib/use-cases/tools/claim-lookup";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ name: string }> };

/**
 * A worker of the tool claims the oldest open lookup (`{"lease_seconds": 60}`):
 * 200 with the lookup and the fencing token its answer must carry, or 204
 * when there is nothing to answer. An agent whose token's scopes cover the tool.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { name } = await params;
  const claimed = await claimLookup(dbFor(principal), name, await readOptionalApiJson(request), principal);
  if (!claimed) return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
  return json(lookupResource(claimed.lookup, claimed.execution));
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
