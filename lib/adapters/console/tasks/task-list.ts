import type { Db } from "@/lib/db/client";
import { countTasks, listTasks, recentTasksWindow, type TaskPage } from "@/lib/use-cases/tasks/list-tasks";
import { countTasksByStatus } from "@/lib/use-cases/tasks/task-queries";
import { isAppError } from "@/lib/core/errors";
import {
  statusOptionsByWorkflow,
  taskListPageSize,
  type TaskListParams,
} from "@/lib/adapters/console/tasks/task-list-query";
import { listWorkflowVersionViews } from "@/lib/stores/workflow-registry";

interface TaskListFrame {
  counts: Awaited<ReturnType<typeof countTasksByStatus>>;
  newestToken: string;
  /** The filter's workflows and their statuses, from the registry. */
  workflows: ReturnType<typeof statusOptionsByWorkflow>;
}

export type TaskListData = TaskListFrame &
  (
    | {
        ok: true;
        page: TaskPage;
        /** How many tasks the filters select, over every page (by id prefix or actor, perhaps among the most recent: `among`). */
        total: Awaited<ReturnType<typeof countTasks>>;
      }
    | { ok: false; message: string }
  );

/** The task list page's data: one page of tasks, the counts strip, and the live-refresh token. */
export async function loadTaskList(db: Db, params: TaskListParams): Promise<TaskListData> {
  const [counts, newest, versions] = await Promise.all([
    countTasksByStatus(db),
    listTasks(db, { limit: 1 }),
    listWorkflowVersionViews(db),
  ]);
  const workflows = statusOptionsByWorkflow(versions.map((v) => v.definition));
  // Same token as /api/console/tasks/latest: the newest change anywhere.
  const newestToken = newest.items[0] ? `${newest.items[0].id}@${newest.items[0].version}` : "empty";
  try {
    const filters = { status: params.status, workflow: params.workflow, q: params.q, actor: params.actor };
    // A text filter looks among the tasks changed most recently, the page and its total in the same window
    // (docs/cost-growth.md).
    const window = filters.q || filters.actor ? await recentTasksWindow(db) : null;
    const [page, total] = await Promise.all([
      listTasks(
        db,
        { ...filters, sort: params.sort, order: params.order, cursor: params.cursor, limit: taskListPageSize },
        { window },
      ),
      countTasks(db, filters, { window }),
    ]);
    return { ok: true, page, total, counts, newestToken, workflows };
  } catch (error) {
    // A hand-edited or outdated cursor is the only expected failure here; say what to do about it.
    if (isAppError(error) && error.code === "validation_failed")
      return { ok: false, message: error.message, counts, newestToken, workflows };
    throw error;
  }
}
