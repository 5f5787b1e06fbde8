/** The claim form's answer (no server imports: the client component reads it too). */
export type ClaimFormState =
  | { status: "idle" }
  | { status: "done"; message: string; item: string }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const idleClaimForm: ClaimFormState = { status: "idle" };

export const claimLostAnswer: ClaimFormState = {
  status: "error",
  message:
    "No answer from the server, so your claim may or may not have been recorded. The list shows what is true now.",
};
