import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Checkpoint } from "@/lib/generated/prisma/client";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import {
  keyringOf,
  openedCheckpoint,
  takeCheckpointInTransaction,
  type CheckpointOptions,
} from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint, type StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { TaskStateSchema } from "@/lib/model/tasks/task-state";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { summarize } from "@/lib/use-cases/checkpoints/checkpoint-rows";
import { openTaskRow } from "@/lib/stores/tasks/task-views";

export const CreateCheckpointInputSchema = z.strictObject({
  /** The version you mean to capture; a task that moved on is a 409 rather than a checkpoint of something else. */
  expected_version: z.number().int().min(1).optional(),
  /** Retrying with the same id returns the first checkpoint and writes nothing. */
  checkpoint_id: clientIdSchema.optional(),
});

/** A checkpoint of the task's current committed state, on request (POST …/checkpoints, the console). */
export async function createCheckpoint(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<{ checkpoint: CheckpointSummary; created: boolean }> {
  const input = parseOrThrow(CreateCheckpointInputSchema, raw);
  if (input.checkpoint_id) {
    const prior = await db.checkpoint.findFirst({ where: { id: input.checkpoint_id } });
    if (prior)
      return {
        checkpoint: await replayCreate(db, await openedCheckpoint(db, prior), taskId, input.expected_version, options),
        created: false,
      };
  }
  try {
    const row = await db.$transaction(async (tx) => {
      // FOR SHARE: no transition commits between reading the state and
      // reading what goes with it, so the checkpoint is of one moment.
      const locked = await tx.$queryRaw<
        Array<{ version: number }>
      >`SELECT version FROM tasks WHERE id = ${taskId} FOR SHARE`;
      if (!locked[0]) throw new AppError("not_found", `Task ${taskId} does not exist.`);
      const task = await tx.task.findFirstOrThrow({ where: { id: taskId } });
      if (input.expected_version !== undefined && task.version !== input.expected_version) {
        throw new AppError(
          "version_conflict",
          `Expected version ${input.expected_version}, but the task is at version ${task.version} (${task.status}). Read it again and retry.`,
          {
            currentVersion: task.version,
            currentStatus: task.status,
          },
        );
      }
      // The snapshot is of the plaintext (the checkpoint seals its payload whole); a value whose key is gone is key_unavailable.
      const state = TaskStateSchema.safeParse((await openTaskRow(tx, task)).state);
      if (!state.success) {
        const message = `The stored state of task ${taskId} does not match TaskState v2; it is not checkpointed.`;
        throw new AppError("invariant_violated", message, {
          violations: [{ invariant: "checkpoint_of_valid_state", message }],
        });
      }
      return takeCheckpointInTransaction(
        tx,
        {
          task: {
            id: task.id,
            workflowDigest: task.workflowDigest,
            intentId: task.intentId,
            createdBy: task.createdBy,
          },
          state: state.data,
          trigger: "on_demand",
          actor,
          checkpointId: input.checkpoint_id,
        },
        options,
      );
    });
    return { checkpoint: await summaryOf(db, row, options), created: true };
  } catch (error) {
    // A twin request with the same checkpoint_id committed first.
    if (input.checkpoint_id && isUniqueViolation(error)) {
      const twin = await db.checkpoint.findFirst({ where: { id: input.checkpoint_id } });
      if (twin)
        return {
          checkpoint: await replayCreate(db, await openedCheckpoint(db, twin), taskId, input.expected_version, options),
          created: false,
        };
    }
    throw error;
  }
}

async function replayCreate(
  db: Db,
  prior: Checkpoint,
  taskId: string,
  expectedVersion: number | undefined,
  options: CheckpointOptions,
): Promise<CheckpointSummary> {
  if (
    prior.taskId !== taskId ||
    prior.trigger !== "on_demand" ||
    (expectedVersion !== undefined && prior.stateVersion !== expectedVersion)
  ) {
    throw new AppError("idempotency_conflict", `Checkpoint id ${prior.id} was already used for a different request.`);
  }
  return summaryOf(db, prior, options);
}

async function summaryOf(db: Db, row: StoredCheckpoint, options: CheckpointOptions): Promise<CheckpointSummary> {
  const task = await db.task.findFirst({ where: { id: row.taskId }, select: { id: true, workflowDigest: true } });
  return summarize(row, verifyStoredCheckpoint(row, keyringOf(options), { task }));
}
