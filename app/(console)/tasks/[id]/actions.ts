"use server";

import { z } from "zod";
import { formIncompleteMessage, type FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { AppError } from "@/lib/core/errors";
import { isReasonRequired } from "@/lib/adapters/console/shared/status";
import { conflictMessage, type TransitionFormState } from "@/lib/adapters/console/tasks/transition-form";
import { consoleDb } from "@/lib/adapters/auth/session";

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

/** The engine's violations, less the one the message already says. */
function violationsBeside(message: string, error?: AppError): string[] {
  return (error?.details.violations ?? []).map((v) => v.message).filter((m) => m !== message);
}

/**
 * A person's manual transition. Authorizes on the server whatever the page
 * showed, then hands the engine the version the page was rendered at (so a
 * stale page can never overwrite a newer state) and the transition id minted
 * with the form (so a double submit replays instead of applying twice).
 */
export const transitionTaskAction: FormAction<TransitionFormState> = sessionFormAction({
  name: "transitionTaskAction",
  permission: "tasks:transition",
  schema: TransitionFormSchema,
  errorState: (message, error) => ({ status: "error", message, details: violationsBeside(message, error) }),
  invalid: (issues) => ({ status: "error", message: formIncompleteMessage, details: issues.map((i) => i.message) }),
  refreshAfter: (error) => error.code === "idempotency_conflict",
  async run({ taskId, to, expectedVersion, transitionId, reason }, { actor }) {
    const db = await consoleDb();
    const task = await getTask(db, taskId);
    const def = task ? getWorkflowByDigest(task.workflow.digest) : undefined;
    if (def && isReasonRequired(def, to) && !reason) {
      return {
        status: "error",
        message: `Give a reason to move this task to ${to}: it is final, and the timeline should say why.`,
        details: [],
      };
    }
    const result = await transitionTask(
      db,
      taskId,
      { expected_version: expectedVersion, to, reason, transition_id: transitionId },
      actor,
    );
    return {
      status: "done",
      version: result.task.version,
      message: result.replayed
        ? `Already applied: this form was submitted before. The task is at version ${result.task.version} (${result.task.status}).`
        : `Moved to ${result.task.status} (version ${result.task.version}).`,
    };
  },
  answer(error) {
    switch (error.code) {
      case "version_conflict": {
        const currentVersion = typeof error.details.currentVersion === "number" ? error.details.currentVersion : 0;
        const currentStatus = typeof error.details.currentStatus === "string" ? error.details.currentStatus : undefined;
        return { status: "conflict", currentVersion, currentStatus, message: conflictMessage(currentVersion) };
      }
      case "idempotency_conflict":
        return {
          status: "error",
          message:
            "This form was already used for a different choice. The page now shows the current state; try again from it.",
          details: [],
        };
      default:
        return undefined;
    }
  },
});
