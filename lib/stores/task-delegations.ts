import type { Db, Tx } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { delegationAuditEntry } from "@/lib/model/audit/agent-audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { AppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";

/**
 * The owner of `task_delegations`: the agents a task's owner lets act on it
 * beside itself. One row per (task, identity); undelegating stamps
 * revoked_at, delegating again clears it, and each change is audited in
 * its transaction.
 */
export interface DelegationView {
  id: string;
  taskId: string;
  identity: string;
  grantedBy: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Delegates (or delegates again); `changed` is false when the identity already held a live delegation. */
export async function grantDelegation(
  db: Db,
  input: { taskId: string; identity: string },
  actor: AuditActor,
): Promise<{ delegation: DelegationView; changed: boolean }> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<DelegationRow[]>`
      INSERT INTO task_delegations (id, task_id, identity, granted_by, created_at, revoked_at)
      VALUES (${newId("dlg")}, ${input.taskId}, ${input.identity}, ${actor.identity}, now(), NULL)
      ON CONFLICT (tenant_id, task_id, identity) DO UPDATE
         SET granted_by = EXCLUDED.granted_by, created_at = now(), revoked_at = NULL
       WHERE task_delegations.revoked_at IS NOT NULL
      RETURNING id, task_id, identity, granted_by, created_at, revoked_at`;
    const written = rows[0];
    if (written) {
      const delegation = toView(written);
      await appendAuditEntry(tx, delegationAuditEntry("task.delegated", delegation, actor));
      return { delegation, changed: true };
    }
    const live = await tx.taskDelegation.findFirstOrThrow({
      where: { taskId: input.taskId, identity: input.identity },
    });
    return { delegation: live, changed: false };
  });
}

/** Ends a live delegation; ending an ended one answers it as it is. */
export async function revokeDelegation(
  db: Db,
  taskId: string,
  delegationId: string,
  actor: AuditActor,
): Promise<DelegationView> {
  return db.$transaction(async (tx) => {
    const { count } = await tx.taskDelegation.updateMany({
      where: { id: delegationId, taskId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    const row = await tx.taskDelegation.findFirst({ where: { id: delegationId, taskId } });
    if (!row) throw new AppError("not_found", `Task ${taskId} has no delegation ${delegationId}.`);
    if (count === 1) await appendAuditEntry(tx, delegationAuditEntry("task.undelegated", row, actor));
    return row;
  });
}

/** The task's delegations, live and ended, oldest first. */
export async function listDelegations(db: Db | Tx, taskId: string): Promise<DelegationView[]> {
  return db.taskDelegation.findMany({ where: { taskId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
}

/** Whether the identity holds a live delegation on the task. */
export async function isDelegate(db: Db | Tx, taskId: string, identity: string): Promise<boolean> {
  const row = await db.taskDelegation.findFirst({
    where: { taskId, identity },
    select: { revokedAt: true },
  });
  return row !== null && row.revokedAt === null;
}

/** The ids of the tasks delegated to the identity now (task lists show them beside its own). */
export async function delegatedTaskIds(db: Db | Tx, identity: string): Promise<string[]> {
  const rows = await db.taskDelegation.findMany({ where: { identity, revokedAt: null }, select: { taskId: true } });
  return rows.map((r) => r.taskId);
}

type DelegationRow = {
  id: string;
  task_id: string;
  identity: string;
  granted_by: string;
  created_at: Date;
  revoked_at: Date | null;
};

function toView(row: DelegationRow): DelegationView {
  return {
    id: row.id,
    taskId: row.task_id,
    identity: row.identity,
    grantedBy: row.granted_by,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  };
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): who a finished task was delegated to, in the caller's transaction. */
export async function deleteDelegationsOfTask(tx: Tx, taskId: string): Promise<{ task_delegations: number }> {
  return { task_delegations: (await tx.taskDelegation.deleteMany({ where: { taskId } })).count };
}
