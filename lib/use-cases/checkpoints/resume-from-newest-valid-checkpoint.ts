import type { Db } from "@/lib/db/client";
import type { CheckpointOptions } from "@/lib/stores/checkpoint-store";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import { failTaskWithoutValidCheckpoint } from "@/lib/use-cases/checkpoints/fail-task-without-valid-checkpoint";

export type ResumePoint =
  /** The newest checkpoint that verifies; `skipped` are newer ones that did not. */
  | { kind: "checkpoint"; checkpoint: CheckpointSummary; skipped: CheckpointSummary[] }
  /** The task has no checkpoint: resume from its committed state. */
  | { kind: "no_checkpoint" }
  /** Every checkpoint failed verification: the task was ended (see failTaskWithoutValidCheckpoint). */
  | { kind: "failed"; task: TaskView; skipped: CheckpointSummary[] };

/**
 * The spec's recovery step 5 for a worker resuming a task: the newest
 * checkpoint that verifies is the resume point, falling back past corrupt
 * ones; when none verifies, the task is ended as failed with an audit
 * record saying why, rather than resumed from poison.
 */
export async function resumeFromNewestValidCheckpoint(
  db: Db,
  taskId: string,
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<ResumePoint> {
  const all = await listCheckpoints(db, taskId, options);
  if (all.length === 0) return { kind: "no_checkpoint" };
  const newestFirst = [...all].sort(
    (a, b) => b.stateVersion - a.stateVersion || b.createdAt.getTime() - a.createdAt.getTime(),
  );
  const valid = newestFirst.findIndex((c) => c.integrity.ok);
  if (valid >= 0) return { kind: "checkpoint", checkpoint: newestFirst[valid]!, skipped: newestFirst.slice(0, valid) };
  const task = await failTaskWithoutValidCheckpoint(db, taskId, newestFirst, actor, options);
  return { kind: "failed", task, skipped: newestFirst };
}
