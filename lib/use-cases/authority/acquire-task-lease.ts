import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { getEnv } from "@/lib/config/env";
import { mayTakeOverLeases } from "@/lib/model/agent-scopes";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { isTakeOver, leaseTtlError } from "@/lib/model/task-authority";
import { acquireLease, getLease, LeaseRequestSchema, takeOverLease, type LeaseView } from "@/lib/stores/leases";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";

/** The lease request as the API takes it: the store's fields and `take_over`. */
export const AcquireTaskLeaseInputSchema = LeaseRequestSchema.extend({
  /** Take the lease even while another identity holds it live (needs the take_over_leases scope); its token is fenced off. */
  take_over: z.boolean().optional(),
});

/**
 * POST /api/v1/tasks/{id}/lease: the task within reach and its workflow in
 * scope, the ttl under the cap, and a take-over of someone else's live
 * lease only with the scope (audited as `lease.taken_over`, naming both
 * holders and both fencing tokens). Without `take_over` a live lease is a
 * 409 as it always was.
 */
export async function acquireTaskLease(db: Db, principal: Principal, taskId: string, raw: unknown): Promise<LeaseView> {
  await requireTaskReach(db, principal, taskId, { drive: true });
  const { take_over, ...request } = parseOrThrow(AcquireTaskLeaseInputSchema, raw ?? {});
  refuseTtlOverCap(request.ttl_seconds);
  if (take_over && isTakeOver(principal, await getLease(db, taskId), new Date())) {
    if (!principal.scopes || !mayTakeOverLeases(principal.scopes)) {
      throw new AppError(
        "forbidden",
        "Taking over another agent's live lease needs the take_over_leases scope on your token.",
        { scope: "take_over_leases" },
      );
    }
    // The holder's lease ends and the token rises: its next write is refused by the task CAS.
    return (await takeOverLease(db, taskId, request, actorOf(principal))).lease;
  }
  return acquireLease(db, taskId, request, actorOf(principal));
}

export function refuseTtlOverCap(ttlSeconds: number): void {
  const error = leaseTtlError(ttlSeconds, getEnv().VERITY_MAX_LEASE_TTL_SECONDS);
  if (error) throw new AppError("validation_failed", `${error.field}: ${error.message}`, { errors: [error] });
}
