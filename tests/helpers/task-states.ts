import {
  emptyGates,
  gateNames,
  TASK_STATE_SCHEMA_VERSION,
  type GateName,
  type Subtask,
  type TaskState,
} from "@/lib/model/tasks/task-state";
import type { TransitionDefinition, WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

/** Pure fixtures for TaskState: valid by construction unless a test breaks them on purpose. */
export function makeState(def: WorkflowDefinition, status: string, overrides: Partial<TaskState> = {}): TaskState {
  return {
    schema_version: TASK_STATE_SCHEMA_VERSION,
    task_id: "task_test",
    version: 1,
    status,
    gates: gatesTrue(def.states[status]?.requiresGates ?? []),
    artifacts: {},
    active_agents: [],
    completed_agents: [],
    failed_agents: [],
    budget: { currency_committed_usd: 10, currency_spent_usd: 1, tokens_spent: 100, hops_used: 3 },
    subtasks: [],
    workflow_digest: def.digest,
    intent_id: "intent_test",
    updated_at: "2026-01-01T00:00:00.000Z",
    updated_by: "spiffe://verity.test/agent/a",
    ...overrides,
  };
}

export function gatesTrue(gates: readonly GateName[]): TaskState["gates"] {
  const out = { ...emptyGates };
  for (const g of gates) out[g] = true;
  return out;
}

/** Every gate an edge's guards name, plus those its two ends require. */
export function gatesForEdge(def: WorkflowDefinition, edge: TransitionDefinition): GateName[] {
  const fromGates = def.states[edge.from]?.requiresGates ?? [];
  const toGates = def.states[edge.to]?.requiresGates ?? [];
  const guardGates = (edge.guards ?? []).flatMap((g) => (g.kind === "gates_true" ? g.gates : []));
  return gateNames.filter((g) => fromGates.includes(g) || toGates.includes(g) || guardGates.includes(g));
}

/** A state at `edge.from` that satisfies every guard of `edge`: mandatory work done, gates set. */
export function stateSatisfying(def: WorkflowDefinition, edge: TransitionDefinition): TaskState {
  const subtasks: Subtask[] = [
    { id: "must", title: "Mandatory work", mandatory: true, status: "COMPLETED" },
    { id: "nice", title: "Optional work", mandatory: false, status: "ACTIVE" },
  ];
  return makeState(def, edge.from, { gates: gatesTrue(gatesForEdge(def, edge)), subtasks });
}
