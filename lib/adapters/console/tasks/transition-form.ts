/** Shared by the transition server action and the form that calls it (no server imports here). */
export type TransitionFormState =
  | { status: "idle" }
  | { status: "done"; message: string; version: number }
  | { status: "conflict"; message: string; currentVersion: number; currentStatus: string | undefined }
  | { status: "error"; message: string; details: string[] };

export const idleTransitionForm: TransitionFormState = { status: "idle" };

export function conflictMessage(currentVersion: number): string {
  return `Someone else changed this task (now version ${currentVersion}) — here is the fresh state; nothing was overwritten.`;
}
