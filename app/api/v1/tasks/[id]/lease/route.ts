import { readOptionalApiJson, requireApiPrincipal } from "@/lib/adapters/api/context";
import { leaseResource } from "@/lib/adapters/api/lease-resources";
import { actorOf } from "@/lib/model/permissions";
import { getDb } from "@/lib/db/client";
import { acquireLease, getLease } from "@/lib/stores/leases";
import { getTaskVersion } from "@/lib/use-cases/tasks/task-queries";
import { AppError } from "@/lib/core/errors";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/**
 * Take the task's lease for `ttl_seconds` (default 60): free or expired, a
 * new lease id and a greater fencing token; a retry naming the live lease's
 * `lease_id` gets it back; anything else while it is live, 409.
 */
export const POST = withProblems(async (request, { params }: Context) => {
  const principal = await requireApiPrincipal(request, "tasks:transition");
  const { id } = await params;
  const lease = await acquireLease(getDb(), id, await readOptionalApiJson(request), actorOf(principal));
  return json(leaseResource(lease), { headers: { "Fencing-Token": lease.fencingToken } });
});

/** The task's latest lease, live or expired (`active`), or null if it was never leased. */
export const GET = withProblems(async (request, { params }: Context) => {
  await requireApiPrincipal(request, "tasks:read");
  const { id } = await params;
  const db = getDb();
  if ((await getTaskVersion(db, id)) === null) throw new AppError("not_found", `Task ${id} does not exist.`);
  const lease = await getLease(db, id);
  return json({ task_id: id, lease: lease ? leaseResource(lease) : null });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
