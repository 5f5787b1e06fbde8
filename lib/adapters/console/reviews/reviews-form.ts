/** Shared by the review and divergence server actions and the forms that call them (no server imports here). */
export type DecisionFormState =
  | { status: "idle" }
  | { status: "done"; message: string; tone: "success" | "info" }
  | { status: "conflict"; message: string; detail: string | null }
  | { status: "error"; message: string; details: string[] };

export const idleDecisionForm: DecisionFormState = { status: "idle" };

export type ResolveFormState =
  | { status: "idle" }
  | { status: "done"; message: string }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string; details: string[] };

export const idleResolveForm: ResolveFormState = { status: "idle" };

export const reasonMaxLength = 1000;

/** What a lost answer means for a decision: the outcome is unknown to the browser, not to Verity. */
export const lostAnswerMessage =
  "No answer from the server, so your decision may or may not have been recorded. The page shows the current state as soon as the server answers; check it before deciding again.";
