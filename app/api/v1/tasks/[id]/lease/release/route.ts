import {
  LeaseReleaseRequestSchema,
  parseLeaseTokenRequest,
  readOptionalApiJson,
  requireApiPrincipal,
} from "@/lib/adapters/api/context";
import { actorOf } from "@/lib/model/permissions";
import { dbFor } from "@/lib/db/client";
import { releaseLease } from "@/lib/stores/leases";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * End your lease now, so the next worker need not wait for it to expire.
 * 204 whether or not the token was still current: a lease that is no longer
 * yours is released already, and a retried release must not fail.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const { fencing_token } = parseLeaseTokenRequest(
    LeaseReleaseRequestSchema,
    await readOptionalApiJson(request),
    request.headers.get("fencing-token"),
  );
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id, { drive: true });
  await releaseLease(db, id, fencing_token, actorOf(principal));
  return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
