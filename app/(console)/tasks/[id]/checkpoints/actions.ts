"use server";

import { refresh } from "next/cache";
import { z } from "zod";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { createCheckpoint } from "@/lib/engine/checkpoints";
import { isAppError } from "@/lib/errors";
import { currentVersionOf, type TakeCheckpointFormState } from "@/lib/console/checkpoints-form";
import { conflictMessage } from "@/lib/console/transition-form";

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
export async function takeCheckpointAction(_previous: TakeCheckpointFormState, formData: FormData): Promise<TakeCheckpointFormState> {
  try {
    const principal = await requireSessionPermission("checkpoints:create", "action takeCheckpointAction");
    const form = TakeCheckpointFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: "The form was incomplete; reload the page and try again." };
    const { taskId, expectedVersion, checkpointId } = form.data;
    const { checkpoint, created } = await createCheckpoint(getDb(), taskId, { expected_version: expectedVersion, checkpoint_id: checkpointId }, actorOf(principal));
    refresh();
    return {
      status: "done",
      checkpointId: checkpoint.id,
      message: created
        ? `Checkpoint taken of version ${checkpoint.stateVersion} (${checkpoint.snapshotStatus ?? "unreadable"}).`
        : `Already taken: this form was submitted before (version ${checkpoint.stateVersion}).`,
    };
  } catch (error) {
    if (!isAppError(error)) throw error;
    switch (error.code) {
      case "version_conflict":
        refresh();
        return { status: "conflict", message: `${conflictMessage(currentVersionOf(error.details))} Take the checkpoint again to capture it.` };
      case "unauthenticated":
        return { status: "error", message: "Your session has ended. Sign in again; nothing was changed." };
      case "forbidden":
        return { status: "error", message: `Not allowed: ${error.message} Nothing was changed.` };
      default:
        return { status: "error", message: error.message };
    }
  }
}
