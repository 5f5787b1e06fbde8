import type { Db, Tx } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import type { Actor } from "@/lib/model/actor";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import type { TransitionResult } from "@/lib/stores/tasks/task-views";

/**
 * A write to a LangGraph thread as a change of its task: the task's
 * compare-and-swap (version, and the writer's lease: a fencing token that
 * is not the live lease's is refused, and so is an agent writing without
 * one while another holds it), its transition record and audit entry, and
 * the thread's rows, in one transaction. `write` runs after the CAS and may
 * throw to undo all of it.
 *
 * One lease holder may write concurrently (LangGraph writes a superstep's
 * tasks in parallel): a CAS lost to such a sibling is taken again on the
 * new version, a few times. The version guards the rows' own rules too: a
 * put that checked its parent against the head loses its CAS to any put
 * that moved the head meanwhile, and checks again.
 */
export async function writeThroughTask<T>(
  db: Db,
  taskId: string,
  change: { reason: string; fencingToken?: string; actor: Actor },
  write: (tx: Tx, transition: TransitionResult) => Promise<T>,
  prepare?: (tx: Tx) => Promise<void>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(async (tx) => {
        await prepare?.(tx);
        const task = await tx.task.findFirst({ where: { id: taskId }, select: { version: true } });
        if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
        const transition = await transitionTaskInTransaction(
          tx,
          taskId,
          {
            expected_version: task.version,
            reason: change.reason,
            ...(change.fencingToken ? { fencing_token: change.fencingToken } : {}),
          },
          change.actor,
        );
        return write(tx, transition);
      });
    } catch (error) {
      if (attempt < 20 && isAppError(error) && error.code === "version_conflict") continue;
      throw error;
    }
  }
}
