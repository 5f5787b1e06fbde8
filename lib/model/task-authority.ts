import type { FieldError } from "@/lib/core/errors";
import { can, type Principal } from "@/lib/model/permissions";

/**
 * Whose task is it: the pure rules behind lib/use-cases/authority/, which
 * every /api/v1 route on a task, its executions, leases, instructions and
 * checkpoints goes through.
 *
 * A task belongs to the identity that created it (tasks.created_by) and to
 * the agents its owner delegates it to. People keep their role's reach (an
 * operator acts on every task); so does a read-only agent token (the auditor
 * role, for monitoring), which can change nothing anyway. An agent that may
 * change tasks is bound to its own and its delegated ones.
 */
export function isBoundToOwnTasks(principal: Pick<Principal, "kind" | "role">): boolean {
  return principal.kind === "agent" && (can(principal, "tasks:transition") || can(principal, "tasks:create"));
}

export function mayReachTask(
  principal: Pick<Principal, "kind" | "role" | "identity">,
  task: { createdBy: string },
  isDelegate: boolean,
): boolean {
  if (!isBoundToOwnTasks(principal)) return true;
  return task.createdBy === principal.identity || isDelegate;
}

/** Whether the answer of mayReachTask depends on a delegation (the one case worth a lookup). */
export function needsDelegationLookup(
  principal: Pick<Principal, "kind" | "role" | "identity">,
  task: { createdBy: string },
): boolean {
  return isBoundToOwnTasks(principal) && task.createdBy !== principal.identity;
}

/**
 * An outcome is a claim about what a tool call did: only the agent that
 * recorded the intent, or the one holding the task's lease now (a worker
 * that took over the task after the first one died), may make it.
 */
export function mayRecordOutcome(
  principal: Pick<Principal, "kind" | "role" | "identity">,
  execution: { createdBy: string },
  liveLeaseHolder: string | null,
): boolean {
  if (!isBoundToOwnTasks(principal)) return true;
  return execution.createdBy === principal.identity || liveLeaseHolder === principal.identity;
}

/** Whether acquiring now takes a live lease away from someone else (needs the take_over_leases scope). */
export function isTakeOver(
  principal: Pick<Principal, "identity">,
  lease: { holder: string; expiresAt: Date } | null,
  now: Date,
): boolean {
  return lease !== null && lease.expiresAt > now && lease.holder !== principal.identity;
}

/**
 * A lease longer than the deployment's cap is refused, not shortened: a
 * worker told "yes" must be able to trust the expiry it asked for, and one
 * that needs longer renews (as the SDK's withLease does every third of it).
 */
export function leaseTtlError(ttlSeconds: number, maxSeconds: number): FieldError | null {
  return ttlSeconds > maxSeconds
    ? {
        field: "ttl_seconds",
        message: `must be at most ${maxSeconds} seconds (VERITY_MAX_LEASE_TTL_SECONDS); renew the lease to keep it longer`,
      }
    : null;
}
