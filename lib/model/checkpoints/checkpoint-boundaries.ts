import { gateNames, type TaskState } from "@/lib/model/tasks/task-state";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";

/**
 * The semantic boundaries at which a transition takes a checkpoint, in its
 * own transaction (lib/stores/tasks/task-transitions.ts): "checkpoint after validated
 * semantic boundaries and before irreversible effects — not after every
 * token". Every state reaching this point has been validated (schema and
 * invariants) by the transition path; most transitions cross no boundary
 * and pay only for this comparison.
 *
 * One checkpoint per transition, the most significant reason first:
 * cancelled / terminal > escalated > a state the workflow declares a
 * boundary (`checkpoint: true`) > gate opened > artifacts validated.
 * The irreversible-effect boundary is taken by recordIntent, with the intent.
 */
export function automaticCheckpointTrigger(
  def: WorkflowDefinition,
  before: TaskState,
  after: TaskState,
): CheckpointTrigger | null {
  if (after.status !== before.status) {
    if (def.states[after.status]?.terminal) return isCancellation(after.status) ? "cancelled" : "terminal";
    if (isEscalation(after.status)) return "escalated";
    if (def.states[after.status]?.checkpoint === true) return "state_boundary";
  }
  if (gateNames.some((g) => after.gates[g] && !before.gates[g])) return "gate_opened";
  if (!sameArtifacts(before.artifacts, after.artifacts)) return "artifacts_validated";
  return null;
}

/**
 * Artifacts are flat (strings and one list of strings): compared member by
 * member, never serialized, because this runs on every transition and
 * code_files may hold a thousand paths.
 */
function sameArtifacts(a: TaskState["artifacts"], b: TaskState["artifacts"]): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as Array<keyof TaskState["artifacts"]>);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length || x.some((v, i) => v !== y[i])) return false;
  }
  return true;
}

/** The workflows name these states; matched by name so a new workflow's CANCELLED/cancelled counts too. */
function isCancellation(status: string): boolean {
  return /^cancell?ed$/i.test(status);
}

function isEscalation(status: string): boolean {
  return /^waiting_for_human$/i.test(status);
}
