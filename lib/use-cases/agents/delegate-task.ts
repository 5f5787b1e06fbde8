import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { isBoundToOwnTasks } from "@/lib/model/task-authority";
import { grantDelegation, type DelegationView } from "@/lib/stores/task-delegations";
import { requireTaskReach, type TaskReach } from "@/lib/use-cases/authority/require-task-reach";

export const DelegateTaskInputSchema = z.strictObject({
  /** The agent's SPIFFE ID, e.g. spiffe://verity.local/agent/refund-bot-2. */
  identity: z
    .string()
    .max(256)
    .regex(/^spiffe:\/\/[a-z0-9.-]+\/\S+$/, "must be an agent's SPIFFE ID (spiffe://<trust domain>/<path>)"),
});

/**
 * The task's owner lets another agent act on it (read, drive, take its
 * lease when free). Only the owner among agents: a delegate cannot pass the
 * task on. People who may transition tasks may delegate too (their role
 * already reaches every task).
 */
export async function delegateTask(
  db: Db,
  principal: Principal,
  taskId: string,
  raw: unknown,
): Promise<{ delegation: DelegationView; changed: boolean }> {
  const task = await requireTaskReach(db, principal, taskId);
  requireOwner(principal, task);
  const { identity } = parseOrThrow(DelegateTaskInputSchema, raw);
  if (identity === task.createdBy) {
    throw new AppError("validation_failed", "identity: is the task's owner already", {
      errors: [{ field: "identity", message: "is the task's owner already" }],
    });
  }
  return grantDelegation(db, { taskId, identity }, actorOf(principal));
}

export function requireOwner(principal: Principal, task: TaskReach): void {
  if (isBoundToOwnTasks(principal) && task.createdBy !== principal.identity) {
    throw new AppError("forbidden", `Only the task's owner (${task.createdBy}) may change who it is delegated to.`, {
      rule: "delegation_by_owner",
    });
  }
}
