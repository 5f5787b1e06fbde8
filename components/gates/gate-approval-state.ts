/** What the gate approval server action answers; kept apart from the "use server" module, which may export only functions. */
export type GateApprovalFormState =
  | { status: "idle" }
  | { status: "done"; message: string }
  /** The task moved after this page was read: nothing was approved; the page shows it as it is now. */
  | { status: "conflict"; message: string }
  | { status: "error"; message: string; details: string[] };

export const idleGateApprovalForm: GateApprovalFormState = { status: "idle" };
