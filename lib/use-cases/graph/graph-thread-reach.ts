import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { isBoundToOwnTasks } from "@/lib/model/task-authority";
import { findGraphThread } from "@/lib/stores/graph-checkpoints";
import { requireTaskReach, type TaskReach } from "@/lib/use-cases/authority/require-task-reach";

/**
 * A thread this principal may reach: its task through requireTaskReach (an
 * agent's own or delegated tasks; people by role), and a thread that does
 * not exist worded exactly like one that is not theirs.
 */
export async function requireGraphThreadReach(
  db: Db,
  principal: Principal,
  namespace: string,
  threadId: string,
  options: { drive?: boolean } = {},
): Promise<TaskReach> {
  const thread = await findGraphThread(db, namespace, threadId);
  if (!thread) throw new AppError("not_found", threadNotFound(namespace, threadId));
  try {
    return await requireTaskReach(db, principal, thread.taskId, options);
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found")
      throw new AppError("not_found", threadNotFound(namespace, threadId));
    throw error;
  }
}

/** Whose threads a listing across threads may show: an agent bound to its own tasks sees the threads it opened. */
export function threadOwnerFilter(principal: Principal): string | undefined {
  return isBoundToOwnTasks(principal) ? principal.identity : undefined;
}

function threadNotFound(namespace: string, threadId: string): string {
  return `Thread ${JSON.stringify(threadId)}${namespace ? ` in namespace ${JSON.stringify(namespace)}` : ""} does not exist.`;
}
