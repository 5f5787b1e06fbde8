import type { Db, Tx } from "@/lib/db/client";
import { isAppError } from "@/lib/core/errors";
import type { Execution } from "@/lib/generated/prisma/client";
import { raiseIfEffectAfterTaskEnded } from "@/lib/use-cases/alerts/divergence";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import { findTaskRow, rememberedTaskRow } from "@/lib/stores/tasks/task-store";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import { getWorkflowByDigest } from "@/lib/model/workflows";

/**
 * Moves the task out of WAITING_FOR_TOOL after an outcome. If the task has
 * moved on meanwhile (an operator cancelled it), the outcome is still
 * recorded; an irreversible effect that succeeded on a task that has ended
 * is a divergence to look at, not something to hide.
 */
export async function moveTaskAfterTool(
  tx: Tx,
  execution: Execution,
  to: string,
  actor: Actor,
  reason: string,
  fencing_token?: string,
  /** The process's database handle: the task's row as this process wrote it (the intent's move) saves the read. */
  rememberOn?: Db,
): Promise<TaskView | null> {
  const remembered = rememberOn ? rememberedTaskRow(rememberOn, execution.taskId) : null;
  if (remembered?.row.status === "WAITING_FOR_TOOL") {
    try {
      return (
        await transitionTaskInTransaction(
          tx,
          execution.taskId,
          { expected_version: remembered.row.version, to, reason, fencing_token },
          actor,
          { row: remembered.row, unchangedSince: remembered.xmin, rememberOn },
        )
      ).task;
    } catch (error) {
      // The task moved on since this process wrote it (nothing was written): decide on the row as it is.
      if (!(isAppError(error) && error.code === "version_conflict")) throw error;
    }
  }
  const task = await findTaskRow(tx, execution.taskId);
  if (!task) return null;
  if (task.status === "WAITING_FOR_TOOL") {
    return (
      await transitionTaskInTransaction(
        tx,
        execution.taskId,
        { expected_version: task.version, to, reason, fencing_token },
        actor,
        { row: task, rememberOn },
      )
    ).task;
  }
  const def = getWorkflowByDigest(task.workflowDigest);
  const ended = !!def?.states[task.status]?.terminal && !def.states[task.status]?.success;
  // Only an outcome that would have moved the task on (success) can contradict its end.
  if (to === "RUNNING" || to === "VALIDATING")
    await raiseIfEffectAfterTaskEnded(tx, execution, { status: task.status, ended }, actor);
  return null;
}
