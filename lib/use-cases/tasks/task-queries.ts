import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { findTaskRow } from "@/lib/stores/tasks/task-store";
import { openTaskView, openTransitionView, type TaskView, type TransitionView } from "@/lib/stores/tasks/task-views";
import type { OpenMode } from "@/lib/stores/tasks/task-state-sealing";
import { readTaskCounts } from "@/lib/stores/task-counts";

/**
 * Reads of one task: the task, its version alone, its transitions; and the
 * tally by status. A task read for the engine's own use is opened strictly
 * (a value whose key is gone is key_unavailable); one read to be shown or
 * answered is `readable`: such a value reads `[sealed value, unreadable: …]`.
 */

export async function getTask(db: Db | Tx, taskId: string, mode: OpenMode = "strict"): Promise<TaskView | null> {
  // Agents read before every write: this is half of the hot path.
  const row = await findTaskRow(db, taskId);
  return row ? openTaskView(db, row, mode) : null;
}

export async function getTaskOrThrow(db: Db, taskId: string, mode: OpenMode = "strict"): Promise<TaskView> {
  const task = await getTask(db, taskId, mode);
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return task;
}

export async function getTaskVersion(db: Db, taskId: string): Promise<number | null> {
  const row = await db.task.findFirst({ where: { id: taskId }, select: { version: true } });
  return row?.version ?? null;
}

/** Tasks per workflow and status, from the counters kept as tasks change (never by counting the tasks). */
export async function countTasksByStatus(db: Db): Promise<Array<{ workflow: string; status: string; count: number }>> {
  const counts = await readTaskCounts(db);
  return counts.map((c) => ({ workflow: c.workflow, status: c.status, count: c.tasks }));
}

export async function listTransitions(
  db: Db,
  taskId: string,
  options: { afterVersion?: number; limit?: number } = {},
): Promise<TransitionView[]> {
  const rows = await db.transition.findMany({
    where: { taskId, ...(options.afterVersion !== undefined ? { toVersion: { gt: options.afterVersion } } : {}) },
    orderBy: { toVersion: "asc" },
    take: Math.min(options.limit ?? 500, 1000),
  });
  // Shown and answered, never decided on by value: a patch whose key is gone reads as such.
  return Promise.all(rows.map((row) => openTransitionView(db, row, "readable")));
}
