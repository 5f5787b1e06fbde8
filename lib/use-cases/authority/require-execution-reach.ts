import { directQuery, type Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { AppError, isAppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { requireTaskReach, type TaskReach } from "@/lib/use-cases/authority/require-task-reach";

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
  const [execution] = await directQuery<{ id: string; taskId: string; createdBy: string }>(
    db,
    Prisma.sql`SELECT id, task_id AS "taskId", created_by AS "createdBy" FROM executions WHERE id = ${executionId}`,
    { prepare: "execution_reach" },
  );
  if (!execution) throw new AppError("not_found", `Execution ${executionId} does not exist.`);
  try {
    return { execution, task: await requireTaskReach(db, principal, execution.taskId, options) };
  } catch (error) {
    if (isAppError(error) && error.code === "not_found")
      throw new AppError("not_found", `Execution ${executionId} does not exist.`);
    throw error;
  }
}
