import { canonicalJson } from "@/lib/canonical-json";
import { gateNames, type TaskState } from "@/lib/engine/task-state";
import type { WorkflowDefinition } from "@/lib/engine/workflow-definition";
import type { CheckpointTrigger } from "@/lib/engine/checkpoint-schema";

/**
 * The semantic boundaries at which a transition takes a checkpoint, in its
 * own transaction (lib/engine/tasks.ts): "checkpoint after validated
 * semantic boundaries and before irreversible effects — not after every
 * token". Every state reaching this point has been validated (schema and
 * invariants) by the transition path; most transitions cross no boundary
 * and pay only for this comparison.
 *
 * One checkpoint per transition, the most significant reason first:
 * cancelled / terminal > escalated > gate opened > artifacts validated.
 * The irreversible-effect boundary is taken by recordIntent, with the intent.
 */
export function automaticCheckpointTrigger(def: WorkflowDefinition, before: TaskState, after: TaskState): CheckpointTrigger | null {
  if (after.status !== before.status) {
    if (def.states[after.status]?.terminal) return isCancellation(after.status) ? "cancelled" : "terminal";
    if (isEscalation(after.status)) return "escalated";
  }
  if (gateNames.some((g) => after.gates[g] && !before.gates[g])) return "gate_opened";
  if (canonicalJson(after.artifacts) !== canonicalJson(before.artifacts)) return "artifacts_validated";
  return null;
}

/** The workflows name these states; matched by name so a new workflow's CANCELLED/cancelled counts too. */
function isCancellation(status: string): boolean {
  return /^cancell?ed$/i.test(status);
}

function isEscalation(status: string): boolean {
  return /^waiting_for_human$/i.test(status);
}
