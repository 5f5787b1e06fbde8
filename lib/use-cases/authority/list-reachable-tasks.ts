import type { Db } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";
import { isBoundToOwnTasks } from "@/lib/model/task-authority";
import { delegatedTaskIds } from "@/lib/stores/task-delegations";
import { listTasks, type ListTasksQuery, type TaskPage } from "@/lib/use-cases/tasks/list-tasks";

/** GET /api/v1/tasks: an agent sees its own tasks and the ones delegated to it; people and read-only tokens, all. */
export async function listReachableTasks(db: Db, principal: Principal, query: ListTasksQuery): Promise<TaskPage> {
  if (!isBoundToOwnTasks(principal)) return listTasks(db, query);
  return listTasks(db, query, {
    ownedOrDelegatedTo: { identity: principal.identity, taskIds: await delegatedTaskIds(db, principal.identity) },
  });
}
