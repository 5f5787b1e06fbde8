import { readOptionalApiJson, requireApiPrincipal } from "@/lib/adapters/api/context";
import { leaseResource } from "@/lib/adapters/api/lease-resources";
import { dbFor } from "@/lib/db/client";
import { getLease } from "@/lib/stores/leases";
import { acquireTaskLease } from "@/lib/use-cases/authority/acquire-task-lease";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * Take the task's lease for `ttl_seconds` (default 60, at most
 * VERITY_MAX_LEASE_TTL_SECONDS: a longer one is a 400 naming ttl_seconds):
 * free or expired, a new lease id and a greater fencing token; a retry
 * naming the live lease's `lease_id` gets it back; anything else while it
 * is live, 409, unless `take_over: true` and the token has the
 * take_over_leases scope (the holder's token is fenced off).
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const lease = await acquireTaskLease(dbFor(principal), principal, id, await readOptionalApiJson(request));
  return json(leaseResource(lease), { headers: { "Fencing-Token": lease.fencingToken } });
});

/** The task's latest lease, live or expired (`active`), or null if it was never leased. */
export const GET = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = dbFor(principal);
  await requireTaskReach(db, principal, id);
  const lease = await getLease(db, id);
  return json({ task_id: id, lease: lease ? leaseResource(lease) : null });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
