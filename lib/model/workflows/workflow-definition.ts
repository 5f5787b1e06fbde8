import { digestOf } from "@/lib/core/canonical-json";
import type { Role } from "@/lib/generated/prisma/enums";
import type { GateName, TaskState } from "@/lib/model/tasks/task-state";
import type { DataClassMap } from "@/lib/model/data-classes";

/**
 * Workflow definitions are data: states, transitions, guards and named
 * rejections. The engine interprets them; the sha256 of their canonical JSON
 * (the spec's `workflow_digest`) is pinned on every task, so a task always
 * runs under the exact definition it was created with.
 */
export type ActorKind = "agent" | "user" | "system";

export type ArtifactName = keyof TaskState["artifacts"];

export type Guard =
  /** Every listed gate must be true once the transition's patch is applied: a gate may be set and its stage left in one CAS. */
  | { kind: "gates_true"; gates: GateName[] }
  /** Every mandatory subtask must be COMPLETED. */
  | { kind: "mandatory_subtasks_completed" }
  /** The named artifact is present and not empty (a blank string or an empty list is absent), once the patch is applied. */
  | { kind: "artifact_present"; artifact: ArtifactName }
  /** Spent stays within the committed budget, once the patch is applied. */
  | { kind: "budget_within_commitment" };

export interface StateDefinition {
  description: string;
  terminal?: boolean;
  /** A terminal state that means the work succeeded (completion invariants apply). */
  success?: boolean;
  /** Gates that must be true while the task is in this state. */
  requiresGates?: GateName[];
  /**
   * The tools an intent may be recorded for while the task is in this state.
   * Absent: any tool in the agent's scope (every shipped definition). An
   * empty list: no tool at all.
   */
  tools?: string[];
  /** Entering this state is a checkpoint boundary: the transition takes a checkpoint in its transaction. */
  checkpoint?: boolean;
}

export interface TransitionDefinition {
  from: string;
  to: string;
  /** Who may take this edge: agents over the API, people in the console, or Verity itself. */
  by: ActorKind[];
  guards?: Guard[];
  description: string;
}

/**
 * Who may set a gate that is a person's decision. A gate without a rule is
 * set by whoever may move the task (the agent's own progress: tests pass,
 * the implementation is complete); a gate with one is set true only by a
 * person holding one of `roles`, through the approval form on the task's
 * page (lib/use-cases/tasks/approve-gate.ts), with a reason, audited. An
 * agent's patch setting it is refused, naming this rule.
 */
export interface GateRule {
  roles: Role[];
  /** Four eyes: the person who set any of these gates may not set this one. */
  notSetBySameAs?: GateName[];
  description: string;
}

/** An invalid edge worth naming: the invariant it would break, in words. */
export interface NamedRejection {
  from: string;
  to: string;
  invariant: string;
  message: string;
}

export interface WorkflowDefinitionData {
  name: string;
  version: number;
  title: string;
  description: string;
  initial: string;
  states: Record<string, StateDefinition>;
  transitions: TransitionDefinition[];
  /** Edges into a terminal state from every non-terminal state (e.g. cancel), expanded on load. */
  fromAnyNonTerminal?: Array<Omit<TransitionDefinition, "from">>;
  rejections: NamedRejection[];
  /** Gates only people set, and who (GateRule). */
  gates?: Partial<Record<GateName, GateRule>>;
  /**
   * How sensitive each field of the task state is (JSON pointer into the
   * TaskState → class, lib/model/data-classes.ts), over the defaults every
   * workflow shares (free text confidential, the rest internal).
   */
  data_classes?: DataClassMap;
}

export interface WorkflowDefinition extends WorkflowDefinitionData {
  digest: string;
  /** All edges, `fromAnyNonTerminal` expanded. */
  edges: TransitionDefinition[];
}

export function defineWorkflow(data: WorkflowDefinitionData): WorkflowDefinition {
  const stateNames = Object.keys(data.states);
  const known = (s: string) => stateNames.includes(s);
  const edges = [
    ...data.transitions,
    ...(data.fromAnyNonTerminal ?? []).flatMap((t) =>
      stateNames.filter((s) => !data.states[s]?.terminal && s !== t.to).map((from) => ({ ...t, from })),
    ),
  ];
  // A definition with a dangling state name is a programming error: fail at load.
  for (const e of [...edges, ...data.rejections]) {
    if (!known(e.from) || !known(e.to)) throw new Error(`workflow ${data.name}: unknown state in ${e.from} -> ${e.to}`);
  }
  if (!known(data.initial)) throw new Error(`workflow ${data.name}: unknown initial state ${data.initial}`);
  return { ...data, digest: digestOf(data), edges };
}

export function isTerminal(def: WorkflowDefinition, status: string): boolean {
  return def.states[status]?.terminal === true;
}

export function edgesFrom(def: WorkflowDefinition, status: string): TransitionDefinition[] {
  return def.edges.filter((e) => e.from === status);
}

/**
 * The tools an intent may be recorded for in `status`: the state's list, or
 * "any" where the definition says nothing (then the agent's token scope is
 * the only limit, as before definitions could say). An unknown status
 * allows nothing: a task in a state its workflow does not have is broken,
 * and no effect should start from it.
 */
export function toolsAllowedIn(def: WorkflowDefinition, status: string): readonly string[] | "any" {
  const state = def.states[status];
  if (!state) return [];
  return state.tools ?? "any";
}

export function findEdge(def: WorkflowDefinition, from: string, to: string): TransitionDefinition | undefined {
  return def.edges.find((e) => e.from === from && e.to === to);
}
