import {
  LeaseRenewRequestSchema,
  parseLeaseTokenRequest,
  readOptionalApiJson,
  requireApiPrincipal,
} from "@/lib/adapters/api/context";
import { leaseResource } from "@/lib/adapters/api/lease-resources";
import { dbFor } from "@/lib/db/client";
import { renewTaskLease } from "@/lib/use-cases/authority/renew-task-lease";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

/**
 * Extend your live lease to `ttl_seconds` from now (at most VERITY_MAX_LEASE_TTL_SECONDS). The token comes from
 * Fencing-Token or the body; a token that is no longer current (expired,
 * or someone else holds the task now) is a 409 lease-conflict: stop writing.
 */
export const POST = withProblems(async (request, { params }: { params: Promise<{ id: string }> }) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const { fencing_token, ttl_seconds } = parseLeaseTokenRequest(
    LeaseRenewRequestSchema,
    await readOptionalApiJson(request),
    request.headers.get("fencing-token"),
  );
  const lease = await renewTaskLease(dbFor(principal), principal, id, fencing_token, { ttl_seconds });
  return json(leaseResource(lease), { headers: { "Fencing-Token": lease.fencingToken } });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
