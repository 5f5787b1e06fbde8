import { type Db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { getLease, getLeaseForShare, leaseRefusal, type LeaseView } from "@/lib/stores/leases";
import type { Actor } from "@/lib/model/actor";

export interface LeaseConflict {
  message: string;
  /** The task's lease as it is now: the holder that took over, or an expired one; null if the task has none. */
  lease: LeaseView | null;
}

/** Throws lease_conflict when `token` (or its absence) is not the task's current lease for `actor` (leaseRefusal); in a transaction, holds the lease row until commit. */
export async function refuseUnlessLeaseCurrent(
  db: Db | Tx,
  taskId: string,
  token: string | undefined,
  actor: Actor,
  what: string,
): Promise<void> {
  const lease = await getLeaseForShare(db, taskId);
  const refusal = leaseRefusal(lease, token, actor);
  if (refusal === null) return;
  throw new AppError("lease_conflict", `${what}: ${refusal}.`, {
    violations: [{ invariant: "fencing_token_current", message: refusal }],
    holder: lease?.holder,
    fencingToken: lease?.fencingToken,
    leaseId: lease?.leaseId,
  });
}

/**
 * Whether a fenced write by `actor` with `token` would be refused now: the
 * rule of the task CAS (lib/stores/tasks/task-store.ts), read rather than written. A
 * token must be the actor's live lease; an agent without one may not write
 * while any lease is live; people and the system are not fenced.
 */
export async function leaseConflictOf(
  db: Db | Tx,
  taskId: string,
  token: string | undefined,
  actor: Actor,
): Promise<LeaseConflict | null> {
  if (token === undefined && actor.kind !== "agent") return null;
  const lease = await getLease(db, taskId);
  const refusal = leaseRefusal(lease, token, actor);
  if (refusal === null) return null;
  return {
    message: `${refusal}. The outcome is recorded; the task was not moved. Stop working on this task: its lease holder continues from the recorded outcome.`,
    lease,
  };
}
