import type { RestorePlan } from "@/lib/model/checkpoints/restore-plan";
import type { IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";

/**
 * What the checkpoint server actions answer, shared with the forms that call
 * them (no server imports here). Every answer says what happened in words;
 * a conflict keeps the existing wording of the console.
 */

export type PlanFormState =
  | { status: "idle" }
  /** `restoreId`: minted with the plan, so confirming it twice replays instead of restoring twice. */
  /** `maskedFields`: what the server masked in the plan for this reader. */
  | { status: "done"; plan: RestorePlan; restoreId: string; plannedAt: string; maskedFields: string[] }
  | { status: "error"; message: string };

export const idlePlanForm: PlanFormState = { status: "idle" };

export type RestoreFormState =
  | { status: "idle" }
  | { status: "done"; message: string; taskId: string; version: number; taskStatus: string; transitionId: string }
  | { status: "conflict"; message: string; currentVersion: number }
  /** `code`: the refusal, when the engine refused the restore (stale, corrupt, …). */
  | { status: "error"; message: string; code: string | null; fallbackCheckpointId: string | null };

export const idleRestoreForm: RestoreFormState = { status: "idle" };

export type VerifyFormState =
  | { status: "idle" }
  | { status: "done"; report: IntegrityReport; verifiedAt: string }
  | { status: "error"; message: string };

export const idleVerifyForm: VerifyFormState = { status: "idle" };

export type TakeCheckpointFormState =
  | { status: "idle" }
  | { status: "done"; message: string; checkpointId: string }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const idleTakeCheckpointForm: TakeCheckpointFormState = { status: "idle" };

/** Same limit as the engine's RestoreInputSchema. */
export const restoreReasonMaxLength = 500;

export const lostRestoreAnswer =
  "No answer from the server, so the restore may or may not have been applied. The page shows the current state as soon as the server answers; confirming the same plan again is safe, it is never applied twice.";

/** The version a conflict reports the task at (0 when the engine did not say). */
export function currentVersionOf(details: { currentVersion?: unknown }): number {
  return typeof details.currentVersion === "number" ? details.currentVersion : 0;
}
