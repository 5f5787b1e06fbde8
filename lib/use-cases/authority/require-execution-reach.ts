import { directQuery, type Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { AppError, isAppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { checkTaskReach, type TaskReach } from "@/lib/use-cases/authority/require-task-reach";

/**
 * The execution, if its task is within this principal's reach; otherwise
 * the same 404 as an execution that does not exist (attempt ids are
 * predictable, `<execution>.1`: knowing one must not open the ledger).
 */
export async function requireExecutionReach(
  db: Db,
  principal: Principal,
  executionId: string,
  options: { drive?: boolean } = {},
): Promise<{ execution: { id: string; taskId: string; createdBy: string }; task: TaskReach }> {
  // The execution and its task's reach in one statement: every agent's markSent and outcome asks this first.
  const [row] = await directQuery<{
    id: string;
    taskId: string;
    createdBy: string;
    taskCreatedBy: string;
    workflowName: string;
  }>(
    db,
    Prisma.sql`
    SELECT e.id, e.task_id AS "taskId", e.created_by AS "createdBy",
           t.created_by AS "taskCreatedBy", t.workflow_name AS "workflowName"
      FROM executions e JOIN tasks t ON t.id = e.task_id
     WHERE e.id = ${executionId}`,
    { prepare: "execution_reach" },
  );
  if (!row) throw new AppError("not_found", `Execution ${executionId} does not exist.`);
  const execution = { id: row.id, taskId: row.taskId, createdBy: row.createdBy };
  try {
    const task = { id: row.taskId, createdBy: row.taskCreatedBy, workflowName: row.workflowName };
    return { execution, task: await checkTaskReach(db, principal, task, options) };
  } catch (error) {
    if (isAppError(error) && error.code === "not_found")
      throw new AppError("not_found", `Execution ${executionId} does not exist.`);
    throw error;
  }
}
