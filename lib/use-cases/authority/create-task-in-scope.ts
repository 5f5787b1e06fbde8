import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { requireWorkflowInScope } from "@/lib/model/agent-scopes";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { mayReachTask, needsDelegationLookup } from "@/lib/model/task-authority";
import { isDelegate } from "@/lib/stores/task-delegations";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { findWorkflowVersion } from "@/lib/stores/workflow-registry";

/**
 * POST /api/v1/tasks: the workflow must be in the token's scopes; the
 * creator becomes the owner (tasks.created_by). A replayed create of a task
 * someone else owns is not answered with their task: the id is taken, and
 * that is all the caller learns (the 409 of a create with other parameters).
 */
export async function createTaskInScope(
  db: Db,
  rawInput: unknown,
  principal: Principal,
): Promise<{ task: TaskView; created: boolean }> {
  const workflow = (rawInput as { workflow?: unknown } | null)?.workflow;
  // Anything but a registered workflow's name is createTask's 400 to word.
  if (typeof workflow === "string" && (await findWorkflowVersion(db, workflow)))
    requireWorkflowInScope(principal.scopes, workflow);
  const result = await createTask(db, rawInput, actorOf(principal));
  if (result.created) return result;
  const delegated = needsDelegationLookup(principal, result.task)
    ? await isDelegate(db, result.task.id, principal.identity)
    : false;
  if (!mayReachTask(principal, result.task, delegated)) {
    throw new AppError(
      "idempotency_conflict",
      `Task ${result.task.id} already exists and was created with different parameters.`,
    );
  }
  return result;
}
