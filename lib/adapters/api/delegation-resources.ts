import type { DelegationView } from "@/lib/stores/task-delegations";

/** A delegation as the API shows it. */
export function delegationResource(d: DelegationView) {
  return {
    id: d.id,
    task_id: d.taskId,
    identity: d.identity,
    granted_by: d.grantedBy,
    created_at: d.createdAt.toISOString(),
    revoked_at: d.revokedAt?.toISOString() ?? null,
    active: d.revokedAt === null,
  };
}
