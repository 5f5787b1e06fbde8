"use server";

import { refresh } from "next/cache";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getTask, transitionTask } from "@/lib/engine/tasks";
import { getWorkflowByDigest } from "@/lib/engine/workflows";
import { isAppError } from "@/lib/errors";
import { isReasonRequired } from "@/lib/console/status";
import { z } from "zod";
import { conflictMessage, type TransitionFormState } from "@/lib/console/transition-form";

/** What the form posts: the version it was rendered at and the transition id minted with it. */
const TransitionFormSchema = z.object({
  taskId: z.string().min(1).max(256),
  to: z.string().min(1).max(64),
  expectedVersion: z.coerce.number().int().min(1),
  transitionId: z.string().min(1).max(128),
  reason: z
    .string()
    .trim()
    .max(1000, "Keep the reason under 1,000 characters.")
    .optional()
    .transform((v) => (v ? v : undefined)),
});

/**
 * A person's manual transition. Authorizes on the server whatever the page
 * showed, then hands the engine the version the page was rendered at (so a
 * stale page can never overwrite a newer state) and the transition id minted
 * with the form (so a double submit replays instead of applying twice).
 */
export async function transitionTaskAction(_previous: TransitionFormState, formData: FormData): Promise<TransitionFormState> {
  try {
    const principal = await requireSessionPermission("tasks:transition", "action transitionTaskAction");
    const form = TransitionFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) {
      return { status: "error", message: "The form was incomplete; reload the page and try again.", details: form.error.issues.map((i) => i.message) };
    }
    const { taskId, to, expectedVersion, transitionId, reason } = form.data;
    const db = getDb();
    const task = await getTask(db, taskId);
    const def = task ? getWorkflowByDigest(task.workflow.digest) : undefined;
    if (def && isReasonRequired(def, to) && !reason) {
      return { status: "error", message: `Give a reason to move this task to ${to}: it is final, and the timeline should say why.`, details: [] };
    }
    const result = await transitionTask(db, taskId, { expected_version: expectedVersion, to, reason, transition_id: transitionId }, actorOf(principal));
    refresh();
    return {
      status: "done",
      version: result.task.version,
      message: result.replayed
        ? `Already applied: this form was submitted before. The task is at version ${result.task.version} (${result.task.status}).`
        : `Moved to ${result.task.status} (version ${result.task.version}).`,
    };
  } catch (error) {
    if (!isAppError(error)) throw error;
    switch (error.code) {
      case "version_conflict": {
        refresh();
        const currentVersion = typeof error.details.currentVersion === "number" ? error.details.currentVersion : 0;
        const currentStatus = typeof error.details.currentStatus === "string" ? error.details.currentStatus : undefined;
        return { status: "conflict", currentVersion, currentStatus, message: conflictMessage(currentVersion) };
      }
      case "unauthenticated":
        return { status: "error", message: "Your session has ended. Sign in again; nothing was changed.", details: [] };
      case "forbidden":
        return { status: "error", message: `Not allowed: ${error.message} Nothing was changed.`, details: (error.details.violations ?? []).map((v) => v.message) };
      case "idempotency_conflict":
        refresh();
        return { status: "error", message: "This form was already used for a different choice. The page now shows the current state; try again from it.", details: [] };
      default:
        return { status: "error", message: error.message, details: (error.details.violations ?? []).map((v) => v.message).filter((m) => m !== error.message) };
    }
  }
}
