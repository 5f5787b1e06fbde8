import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { findTaskRow } from "@/lib/stores/tasks/task-store";
import { toTaskView, toTransitionView, type TaskView, type TransitionView } from "@/lib/stores/tasks/task-views";

/** Reads of one task: the task, its version alone, its transitions; and the tally by status. */

export async function getTask(db: Db, taskId: string): Promise<TaskView | null> {
  // Agents read before every write: this is half of the hot path.
  const row = await findTaskRow(db, taskId);
  return row ? toTaskView(row) : null;
}

export async function getTaskOrThrow(db: Db, taskId: string): Promise<TaskView> {
  const task = await getTask(db, taskId);
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return task;
}

export async function getTaskVersion(db: Db, taskId: string): Promise<number | null> {
  const row = await db.task.findFirst({ where: { id: taskId }, select: { version: true } });
  return row?.version ?? null;
}

export async function countTasksByStatus(db: Db): Promise<Array<{ workflow: string; status: string; count: number }>> {
  const groups = await db.task.groupBy({ by: ["workflowName", "status"], _count: { _all: true } });
  return groups.map((g) => ({ workflow: g.workflowName, status: g.status, count: g._count._all }));
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
  return rows.map(toTransitionView);
}
