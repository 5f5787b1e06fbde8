"use server";

import { refresh } from "next/cache";
import { z } from "zod";
import { actorOf } from "@/lib/auth/permissions";
import { requireSessionPermission } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { planRestore, restoreCheckpoint, verifyCheckpoint } from "@/lib/engine/checkpoints";
import { isAppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { describeRestoreResult } from "@/lib/console/checkpoints-format";
import { currentVersionOf, restoreReasonMaxLength, type PlanFormState, type RestoreFormState, type VerifyFormState } from "@/lib/console/checkpoints-form";
import { conflictMessage } from "@/lib/console/transition-form";

const checkpointId = z.string().min(1).max(256);
/** A checkbox posts "on" when ticked and nothing otherwise. */
const checkbox = z
  .literal("on")
  .optional()
  .transform((v) => v === "on");

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

/** Words for the errors every checkpoint action can meet before it reaches the engine's rules. */
function accessMessage(error: { code: string; message: string }): string | null {
  switch (error.code) {
    case "unauthenticated":
      return "Your session has ended. Sign in again; nothing was changed.";
    case "forbidden":
      return `Not allowed: ${error.message} Nothing was changed.`;
    case "not_found":
      return `${error.message} It may have been mistyped.`;
    default:
      return null;
  }
}

/** Checks the stored bytes again, now. Read-only: anyone who may read checkpoints may verify one. */
export async function verifyCheckpointAction(_previous: VerifyFormState, formData: FormData): Promise<VerifyFormState> {
  try {
    await requireSessionPermission("checkpoints:read", "action verifyCheckpointAction");
    const id = checkpointId.parse(formData.get("checkpointId"));
    const report = await verifyCheckpoint(getDb(), id);
    return { status: "done", report, verifiedAt: new Date().toISOString() };
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { status: "error", message: accessMessage(error) ?? error.message };
  }
}

/**
 * The dry run. Writes nothing, so it needs only checkpoints:read (as the
 * API's restore-plan does); the restore itself is checked separately. Each
 * plan mints the restore id its confirmation will carry: confirming one plan
 * twice replays, a new plan is a new attempt.
 */
export async function planRestoreAction(_previous: PlanFormState, formData: FormData): Promise<PlanFormState> {
  try {
    const principal = await requireSessionPermission("checkpoints:read", "action planRestoreAction");
    const form = PlanFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: "The form was incomplete; reload the page and try again." };
    const plan = await planRestore(getDb(), form.data.checkpointId, { rewind: form.data.rewind }, actorOf(principal));
    return { status: "done", plan, restoreId: newId("rst"), plannedAt: new Date().toISOString() };
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { status: "error", message: accessMessage(error) ?? error.message };
  }
}

/**
 * Applies a planned restore. Engineers only, checked here whatever the page
 * showed; the engine gets the task version the plan was made at, so a task
 * that moved since is a conflict rather than a restore over newer state, and
 * it re-plans inside its own transaction, so what is applied is what the
 * rules allow at that moment.
 */
export async function restoreCheckpointAction(_previous: RestoreFormState, formData: FormData): Promise<RestoreFormState> {
  try {
    const principal = await requireSessionPermission("checkpoints:restore", "action restoreCheckpointAction");
    const form = RestoreFormSchema.safeParse(Object.fromEntries(formData));
    if (!form.success) return { status: "error", message: form.error.issues[0]?.message ?? "The form was incomplete.", code: null, fallbackCheckpointId: null };
    const { checkpointId: id, expectedVersion, rewind, restoreId, reason } = form.data;
    const result = await restoreCheckpoint(getDb(), id, { expected_version: expectedVersion, rewind, reason, restore_id: restoreId }, actorOf(principal));
    refresh();
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
  } catch (error) {
    if (!isAppError(error)) throw error;
    const fallback = typeof error.details.fallbackCheckpointId === "string" ? error.details.fallbackCheckpointId : null;
    switch (error.code) {
      case "version_conflict": {
        refresh();
        const currentVersion = currentVersionOf(error.details);
        return { status: "conflict", currentVersion, message: `${conflictMessage(currentVersion)} Plan the restore again from it.` };
      }
      case "invariant_violated":
        refresh();
        return { status: "error", message: `Refused: ${error.message} Nothing was changed.`, code: error.details.violations?.[0]?.invariant ?? null, fallbackCheckpointId: fallback };
      case "idempotency_conflict":
        return { status: "error", message: "This plan was already confirmed with a different reason or choice. Plan again.", code: null, fallbackCheckpointId: null };
      default:
        return { status: "error", message: accessMessage(error) ?? error.message, code: null, fallbackCheckpointId: null };
    }
  }
}
