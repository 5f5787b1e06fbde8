import { directQuery, type Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { AppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { requireWorkflowInScope } from "@/lib/model/agent-scopes";
import { mayReachTask, needsDelegationLookup } from "@/lib/model/task-authority";
import { isDelegate } from "@/lib/stores/task-delegations";

export interface TaskReach {
  taskId: string;
  createdBy: string;
  workflow: string;
}

/**
 * The task, if this principal may act on it (lib/model/task-authority.ts):
 * people and read-only tokens by their role, an agent only on its own and
 * its delegated tasks. Another agent's task is a 404 worded exactly like a
 * task that does not exist: task ids are often chosen by clients and say
 * what the work is (`refund-order-1001`), so even "it exists, but is not
 * yours" is information an agent has no business learning.
 *
 * `drive` (every write: transitions, leases, intents, outcomes,
 * instructions, checkpoints) also needs the task's workflow in the token's
 * scopes; reading does not.
 */
export async function requireTaskReach(
  db: Db,
  principal: Principal,
  taskId: string,
  options: { drive?: boolean } = {},
): Promise<TaskReach> {
  // Every agent request on a task asks this first: one prepared statement, not a Prisma query.
  const [task] = await directQuery<ReachedTaskRow>(
    db,
    Prisma.sql`SELECT id, created_by AS "createdBy", workflow_name AS "workflowName" FROM tasks WHERE id = ${taskId}`,
    { prepare: "task_reach" },
  );
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return checkTaskReach(db, principal, task, options);
}

/** The columns of a task's row that its reach depends on (neither ever changes). */
export interface ReachedTaskRow {
  id: string;
  createdBy: string;
  workflowName: string;
}

/**
 * requireTaskReach on a row the caller has already read: a use case that
 * reads the task anyway (transitionTask) checks the reach on that read
 * instead of a read of its own, before it answers anything about the task.
 */
export async function checkTaskReach(
  db: Db,
  principal: Principal,
  task: ReachedTaskRow,
  options: { drive?: boolean } = {},
): Promise<TaskReach> {
  const delegated = needsDelegationLookup(principal, task) ? await isDelegate(db, task.id, principal.identity) : false;
  if (!mayReachTask(principal, task, delegated)) throw new AppError("not_found", `Task ${task.id} does not exist.`);
  if (options.drive) requireWorkflowInScope(principal.scopes, task.workflowName);
  return { taskId: task.id, createdBy: task.createdBy, workflow: task.workflowName };
}
