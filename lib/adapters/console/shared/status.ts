import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

/**
 * How a status looks. Definitions say which states are terminal and which
 * of those mean success; the rest is read from the name, so a new workflow
 * gets sensible colours without touching the console.
 */
export type StatusTone = "success" | "danger" | "neutral" | "attention" | "warning" | "active";

export function statusTone(def: WorkflowDefinition | undefined, status: string): StatusTone {
  const state = def?.states[status];
  const name = status.toUpperCase();
  if (state?.terminal) {
    if (state.success) return "success";
    return /FAIL/.test(name) ? "danger" : "neutral";
  }
  if (/HUMAN/.test(name)) return "attention";
  if (/FAIL|RECOVER|RECONCIL/.test(name)) return "warning";
  return "active";
}

/** A reason is demanded for stopping work for good (cancel, give up): the timeline must say why. */
export function isReasonRequired(def: WorkflowDefinition, to: string): boolean {
  const state = def.states[to];
  return state?.terminal === true && state.success !== true;
}

/** Whether the workflow's rules mention gates at all; agent tasks leave them unused. */
export function usesGates(def: WorkflowDefinition): boolean {
  return (
    Object.values(def.states).some((s) => (s.requiresGates?.length ?? 0) > 0) ||
    def.edges.some((e) => (e.guards ?? []).some((g) => g.kind === "gates_true"))
  );
}
