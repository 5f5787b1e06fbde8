"use server";

import { z } from "zod";
import { formIncompleteMessage, type FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { currentVersionOf, type TakeCheckpointFormState } from "@/lib/adapters/console/checkpoints/checkpoints-form";
import { conflictMessage } from "@/lib/adapters/console/tasks/transition-form";
import { consoleDb } from "@/lib/adapters/auth/session";

const TakeCheckpointFormSchema = z.object({
  taskId: z.string().min(1).max(256),
  expectedVersion: z.coerce.number().int().min(1),
  checkpointId: z.string().min(1).max(128),
});

/**
 * A checkpoint on request. The page's version pins which state is meant (a
 * task that moved on is a conflict, not a checkpoint of something else); the
 * id minted with the form makes a double submit one checkpoint.
 */
export const takeCheckpointAction: FormAction<TakeCheckpointFormState> = sessionFormAction({
  name: "takeCheckpointAction",
  permission: "checkpoints:create",
  schema: TakeCheckpointFormSchema,
  errorState: (message) => ({ status: "error", message }),
  invalid: () => ({ status: "error", message: formIncompleteMessage }),
  async run({ taskId, expectedVersion, checkpointId }, { actor }) {
    const { checkpoint, created } = await createCheckpoint(
      await consoleDb(),
      taskId,
      { expected_version: expectedVersion, checkpoint_id: checkpointId },
      actor,
    );
    return {
      status: "done",
      checkpointId: checkpoint.id,
      message: created
        ? `Checkpoint taken of version ${checkpoint.stateVersion} (${checkpoint.snapshotStatus ?? "unreadable"}).`
        : `Already taken: this form was submitted before (version ${checkpoint.stateVersion}).`,
    };
  },
  answer: (error) =>
    error.code === "version_conflict"
      ? {
          status: "conflict",
          message: `${conflictMessage(currentVersionOf(error.details))} Take the checkpoint again to capture it.`,
        }
      : undefined,
});
