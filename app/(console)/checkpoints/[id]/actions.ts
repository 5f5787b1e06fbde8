"use server";

import { z } from "zod";
import { formIncompleteMessage, type FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { planRestore } from "@/lib/use-cases/checkpoints/plan-restore";
import { maskRestorePlanForReader } from "@/lib/use-cases/data-classes/mask-for-reader";
import { verifyCheckpoint } from "@/lib/use-cases/checkpoints/verify-checkpoint";
import type { AppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";
import { describeRestoreResult } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import {
  currentVersionOf,
  restoreReasonMaxLength,
  type PlanFormState,
  type RestoreFormState,
  type VerifyFormState,
} from "@/lib/adapters/console/checkpoints/checkpoints-form";
import { conflictMessage } from "@/lib/adapters/console/tasks/transition-form";
import { consoleDb } from "@/lib/adapters/auth/session";

const checkpointId = z.string().min(1).max(256);
/** A checkbox posts "on" when ticked and nothing otherwise. */
const checkbox = z
  .literal("on")
  .optional()
  .transform((v) => v === "on");

const VerifyFormSchema = z.object({ checkpointId });

const PlanFormSchema = z.object({ checkpointId, rewind: checkbox });

const RestoreFormSchema = z.object({
  checkpointId,
  expectedVersion: z.coerce.number().int().min(1),
  rewind: checkbox,
  restoreId: z.string().min(1).max(128),
  reason: z
    .string()
    .trim()
    .min(1, "Give a reason: it is recorded in the task's timeline with the restore.")
    .max(restoreReasonMaxLength, `Keep the reason under ${restoreReasonMaxLength} characters.`),
});

/** A checkpoint id that finds nothing came from a link or a typed URL. */
function notFoundAnswer(error: AppError): { status: "error"; message: string } | undefined {
  return error.code === "not_found"
    ? { status: "error", message: `${error.message} It may have been mistyped.` }
    : undefined;
}

/** Checks the stored bytes again, now. Read-only: anyone who may read checkpoints may verify one. */
export const verifyCheckpointAction: FormAction<VerifyFormState> = sessionFormAction({
  name: "verifyCheckpointAction",
  permission: "checkpoints:read",
  schema: VerifyFormSchema,
  readOnly: true,
  errorState: (message) => ({ status: "error", message }),
  invalid: () => ({ status: "error", message: formIncompleteMessage }),
  async run({ checkpointId: id }) {
    const report = await verifyCheckpoint(await consoleDb(), id);
    return { status: "done", report, verifiedAt: new Date().toISOString() };
  },
  answer: notFoundAnswer,
});

/**
 * The dry run. Writes nothing, so it needs only checkpoints:read (as the
 * API's restore-plan does); the restore itself is checked separately. Each
 * plan mints the restore id its confirmation will carry: confirming one plan
 * twice replays, a new plan is a new attempt.
 */
export const planRestoreAction: FormAction<PlanFormState> = sessionFormAction({
  name: "planRestoreAction",
  permission: "checkpoints:read",
  schema: PlanFormSchema,
  readOnly: true,
  errorState: (message) => ({ status: "error", message }),
  invalid: () => ({ status: "error", message: formIncompleteMessage }),
  async run({ checkpointId: id, rewind }, { actor, principal }) {
    const planned = await planRestore(await consoleDb(), id, { rewind }, actor);
    // Masked on the server: a restricted value of the resulting state or the diff never reaches an uncleared reader.
    const seen = maskRestorePlanForReader(principal, planned, planned.reauthorization.workflow.currentDigest);
    return {
      status: "done",
      plan: seen.value,
      maskedFields: seen.maskedFields,
      restoreId: newId("rst"),
      plannedAt: new Date().toISOString(),
    };
  },
  answer: notFoundAnswer,
});

/**
 * Applies a planned restore. Engineers only, checked here whatever the page
 * showed; the engine gets the task version the plan was made at, so a task
 * that moved since is a conflict rather than a restore over newer state, and
 * it re-plans inside its own transaction, so what is applied is what the
 * rules allow at that moment.
 */
export const restoreCheckpointAction: FormAction<RestoreFormState> = sessionFormAction({
  name: "restoreCheckpointAction",
  permission: "checkpoints:restore",
  schema: RestoreFormSchema,
  errorState: (message) => ({ status: "error", message, code: null, fallbackCheckpointId: null }),
  // A refusal is recorded as an attempt: the page's list of attempts shows it.
  refreshAfter: (error) => error.code === "invariant_violated",
  async run({ checkpointId: id, expectedVersion, rewind, restoreId, reason }, { actor }) {
    const result = await restoreCheckpoint(
      await consoleDb(),
      id,
      { expected_version: expectedVersion, rewind, reason, restore_id: restoreId },
      actor,
    );
    return {
      status: "done",
      message: describeRestoreResult({
        version: result.task.version,
        status: result.task.status,
        checkpointVersion: result.plan.checkpoint.stateVersion,
        rewind: result.restore.rewind,
        replayed: result.replayed,
      }),
      taskId: result.task.id,
      version: result.task.version,
      taskStatus: result.task.status,
      transitionId: result.transition.id,
    };
  },
  answer(error) {
    switch (error.code) {
      case "version_conflict": {
        const currentVersion = currentVersionOf(error.details);
        return {
          status: "conflict",
          currentVersion,
          message: `${conflictMessage(currentVersion)} Plan the restore again from it.`,
        };
      }
      case "invariant_violated":
        return {
          status: "error",
          message: `Refused: ${error.message} Nothing was changed.`,
          code: error.details.violations?.[0]?.invariant ?? null,
          fallbackCheckpointId:
            typeof error.details.fallbackCheckpointId === "string" ? error.details.fallbackCheckpointId : null,
        };
      case "idempotency_conflict":
        return {
          status: "error",
          message: "This plan was already confirmed with a different reason or choice. Plan again.",
          code: null,
          fallbackCheckpointId: null,
        };
      default: {
        const notFound = notFoundAnswer(error);
        return notFound ? { ...notFound, code: null, fallbackCheckpointId: null } : undefined;
      }
    }
  },
});
