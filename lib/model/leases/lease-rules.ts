import type { Actor } from "@/lib/model/actor";

/**
 * What a lease is and when it lets a write through, as pure functions: the
 * task CAS (lib/stores/tasks/task-store.ts) applies the same rule in SQL, in the
 * statement that writes, and lib/stores/leases.ts owns the table.
 */
export interface LeaseView {
  taskId: string;
  leaseId: string;
  holder: string;
  fencingToken: string;
  expiresAt: Date;
  acquiredAt: Date;
  renewedAt: Date;
}

/** The view of a `leases` row as Prisma returns it. */
export function leaseViewOf(row: {
  taskId: string;
  leaseId: string;
  holder: string;
  fencingToken: bigint;
  expiresAt: Date;
  acquiredAt: Date;
  renewedAt: Date;
}): LeaseView {
  return {
    taskId: row.taskId,
    leaseId: row.leaseId,
    holder: row.holder,
    fencingToken: String(row.fencingToken),
    expiresAt: row.expiresAt,
    acquiredAt: row.acquiredAt,
    renewedAt: row.renewedAt,
  };
}

/** How a lease is named in messages: holder, token and expiry, as the row says now. */
export function describeLease(
  lease: Pick<LeaseView, "holder" | "fencingToken" | "expiresAt" | "leaseId">,
  now = new Date(),
): string {
  const live = lease.expiresAt.getTime() > now.getTime();
  return `${live ? "held" : "last held"} by ${lease.holder} with fencing token ${lease.fencingToken} (lease ${lease.leaseId}), ${live ? "expiring" : "expired"} ${lease.expiresAt.toISOString()}`;
}

/**
 * The fencing rule, as a pure function of the task's lease row (or null),
 * for explaining a refusal; the task CAS (lib/stores/tasks/task-store.ts) applies the
 * same rule in SQL, in the statement that writes. With a token, it must be
 * the writer's own live lease. Without one, an agent may not write while
 * any lease is live, its own identity's included: that lease may belong to
 * another process of the same agent. People and the system are not fenced
 * (an operator may cancel a leased task); the version still guards them.
 * Null when the write is allowed, else why not, in words.
 */
export function leaseRefusal(
  lease: LeaseView | null,
  token: string | undefined,
  actor: Actor,
  now = new Date(),
): string | null {
  const live = !!lease && lease.expiresAt.getTime() > now.getTime();
  const held = lease ? `the lease is ${describeLease(lease, now)}` : "the task has no lease";
  if (token !== undefined) {
    if (live && lease.holder === actor.identity && lease.fencingToken === token) return null;
    return `Fencing token ${token} is not the current lease of ${actor.identity} on task ${lease?.taskId ?? "this task"}: ${held}`;
  }
  if (actor.kind !== "agent" || !live) return null;
  return lease.holder === actor.identity
    ? `Task ${lease.taskId} is leased (${held}); send the fencing token of your lease: without one, a write cannot be told from another process of ${actor.identity}`
    : `Task ${lease.taskId} is leased by another worker (${held}); acquire the lease and send its fencing token`;
}
