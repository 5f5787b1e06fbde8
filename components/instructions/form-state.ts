/** What the add-instruction server action answers; kept apart from the "use server" module, which may export only functions. */
export interface LatestInstructionSummary {
  seq: number;
  topic: string;
  directive: string;
  text: string;
  issuedBy: string;
}

export type InstructionFormState =
  | { status: "idle" }
  | { status: "done"; message: string }
  /** Someone added an instruction after this page was read: nothing was written; `latest` is what they added. */
  | { status: "conflict"; message: string; latest: LatestInstructionSummary | null }
  | { status: "error"; message: string; details: string[] };

export const idleInstructionForm: InstructionFormState = { status: "idle" };

export const instructionTextMaxLength = 2000;

/** Topics the tools are governed by (lib/model/executions/tools.ts), offered first; any other well-formed topic may be typed. */
export const knownInstructionTopics = ["refund", "customer_note"] as const;
