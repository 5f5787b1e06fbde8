import type { Db } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { LeaseRequestSchema, renewLease, type LeaseView } from "@/lib/stores/leases";
import { refuseTtlOverCap } from "@/lib/use-cases/authority/acquire-task-lease";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";

/** POST /api/v1/tasks/{id}/lease/renew: within reach and scope, and never past the cap however often it is renewed. */
export async function renewTaskLease(
  db: Db,
  principal: Principal,
  taskId: string,
  fencingToken: string,
  raw: { ttl_seconds?: number },
): Promise<LeaseView> {
  await requireTaskReach(db, principal, taskId, { drive: true });
  const { ttl_seconds } = parseOrThrow(LeaseRequestSchema, raw);
  refuseTtlOverCap(ttl_seconds);
  return renewLease(db, taskId, fencingToken, { ttl_seconds }, actorOf(principal));
}
