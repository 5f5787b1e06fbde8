import { digestOf } from "@/lib/core/canonical-json";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";
import { keyringOf, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { pathToFailure } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { buildRestorePlan } from "@/lib/use-cases/checkpoints/plan-restore";
import {
  getCheckpointRowOrThrow,
  getTaskOrThrowIn,
  insertRestore,
  workflowOf,
} from "@/lib/use-cases/checkpoints/checkpoint-rows";

/**
 * Ends a task that has no checkpoint to resume from along the shortest path
 * its workflow allows the actor to a failure state, in one transaction with
 * an audit record: the transitions say why, and a refused restore record
 * (code `corrupt`) names the newest checkpoint and what failed.
 */
export async function failTaskWithoutValidCheckpoint(
  db: Db,
  taskId: string,
  corrupt: readonly CheckpointSummary[],
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<TaskView> {
  const newest = corrupt[0];
  if (!newest)
    throw new AppError("validation_failed", "corrupt: name at least one checkpoint that failed verification");
  const why = `no valid checkpoint to resume from: ${corrupt
    .slice(0, 5)
    .map(
      (c) =>
        `${c.id} (${c.integrity.checks
          .filter((k) => !k.ok)
          .map((k) => k.check)
          .join(", ")})`,
    )
    .join("; ")}`;
  const row = await getCheckpointRowOrThrow(db, newest.id);
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM tasks WHERE id = ${taskId} FOR UPDATE`;
    const plan = await buildRestorePlan(tx, row, false, actor, keyringOf(options));
    if (plan.integrity.ok)
      throw new AppError("invariant_violated", `Checkpoint ${row.id} verifies; resume from it instead.`);
    const current = await getTaskOrThrowIn(tx, taskId);
    const def = workflowOf(current);
    const path = pathToFailure(def, current.status, actor.kind);
    if (!path) {
      const message = `Task ${taskId} is ${current.status}; its workflow has no path from there to a failure state that a ${actor.kind} may take.`;
      throw new AppError("invariant_violated", message, {
        violations: [{ invariant: "failure_state_reachable", message }],
      });
    }
    let task = current;
    for (const to of path)
      task = (
        await transitionTaskInTransaction(
          tx,
          taskId,
          { expected_version: task.version, to, reason: why.slice(0, 1000) },
          actor,
        )
      ).task;
    await insertRestore(tx, {
      id: newId("rst"),
      taskId,
      checkpointId: row.id,
      rewind: false,
      fromVersion: current.version,
      actor,
      reason: `${why}; the task was ended ${task.status}`.slice(0, 2000),
      requestDigest: digestOf({
        op: "fail_without_checkpoint",
        task_id: taskId,
        checkpoints: corrupt.map((c) => c.id),
      }),
      plan,
      outcome: "refused",
    });
    return task;
  });
}
