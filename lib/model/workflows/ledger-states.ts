import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

/**
 * The states the execution ledger moves a task through around a tool call:
 * into WAITING_FOR_TOOL with the intent, into WAITING_FOR_HUMAN when a call
 * is frozen for people. agent-task has them; a registered workflow need not
 * (software-delivery releases from its own `releasing` state). Where the
 * workflow has no such state the task stays where it is, its version still
 * bumped under the same CAS and fencing token, and the execution and its
 * review carry the fact — a ledger never invents a state the definition does
 * not declare.
 */
export type LedgerState = "WAITING_FOR_TOOL" | "WAITING_FOR_HUMAN";

/** `{ to: state }` when the workflow has the state, `{}` (an in-place update) when it does not. */
export function ledgerMove(def: WorkflowDefinition | undefined, state: LedgerState): { to?: string } {
  return !def || def.states[state] ? { to: state } : {};
}

/**
 * Whether a task in `status` is in people's hands for a frozen call: in
 * WAITING_FOR_HUMAN, or, in a workflow without that state, anywhere short of
 * the end (the review itself is what waits).
 */
export function waitsForPeople(def: WorkflowDefinition | undefined, status: string | undefined): boolean {
  if (status === undefined) return false;
  if (status === "WAITING_FOR_HUMAN") return true;
  return !!def && !def.states.WAITING_FOR_HUMAN && def.states[status] !== undefined && !def.states[status]?.terminal;
}
