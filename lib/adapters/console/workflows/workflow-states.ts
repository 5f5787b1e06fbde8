import type { ActorKind, GateRule, WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { describeGuard } from "@/lib/adapters/console/shared/format";

/**
 * A version's graph as a list a phone can show: each state with the edges
 * out of it, who may take each and what must hold first; the edges from any
 * active state once, apart; and every gate the definition names with who
 * sets it. The same facts as the diagram, in reading order and as text.
 */
export interface OutgoingEdge {
  to: string;
  toTerminal: boolean;
  by: ActorKind[];
  /** Each guard in words ("gates plan_approved true"). */
  guards: string[];
  description: string;
}

export interface StateItem {
  name: string;
  description: string;
  initial: boolean;
  terminal: boolean;
  success: boolean;
  requiresGates: string[];
  /** The tools an intent may be recorded for here; "any" when the definition does not say. */
  tools: readonly string[] | "any";
  /** Entering the state takes a checkpoint. */
  checkpoint: boolean;
  edges: OutgoingEdge[];
}

export interface GateItem {
  gate: string;
  /** A person's decision with its rule, or the agent's own progress (set by whoever may move the task). */
  rule: GateRule | null;
  /** Where the rule comes from: this version, or (for a version that predates gate rules) a newer one. */
  ruleFrom: "this version" | { version: number } | null;
  /** States that require it, and edges whose guard names it. */
  requiredBy: string[];
  guardsOn: string[];
}

export interface WorkflowStates {
  states: StateItem[];
  /** Edges from every active (non-terminal) state, e.g. cancel. */
  fromAnyActive: OutgoingEdge[];
  gates: GateItem[];
}

/**
 * The states in the order work flows through them: breadth-first from the
 * initial state along the transitions as declared, the active states first
 * and the terminal ones after (success first), then any the transitions do not reach. Not
 * the document's key order: a definition read back from the registry's
 * JSONB has its keys in PostgreSQL's order (shortest first), which would
 * list "done" before "planning".
 */
export function orderedStateNames(
  def: Pick<WorkflowDefinitionData, "initial" | "states" | "transitions" | "fromAnyNonTerminal">,
): string[] {
  const seen = new Set<string>([def.initial]);
  const queue = [def.initial];
  for (let state = queue.shift(); state !== undefined; state = queue.shift()) {
    const next = [...def.transitions.filter((t) => t.from === state).map((t) => t.to)];
    if (def.states[state]?.terminal !== true) next.push(...(def.fromAnyNonTerminal ?? []).map((t) => t.to));
    for (const to of next)
      if (!seen.has(to) && def.states[to]) {
        seen.add(to);
        queue.push(to);
      }
  }
  const reached = [...seen].filter((name) => def.states[name]);
  const rest = Object.keys(def.states).filter((name) => !seen.has(name));
  const terminal = (name: string) => def.states[name]?.terminal === true;
  const success = (name: string) => terminal(name) && def.states[name]?.success === true;
  return [
    ...reached.filter((n) => !terminal(n)),
    ...reached.filter(success),
    ...reached.filter((n) => terminal(n) && !success(n)),
    ...rest,
  ];
}

/**
 * `gateRulesFallback`: the rules a task on this version follows when the
 * version declares none (the newest version's, gateRulesOf), and that
 * version's number.
 */
export function workflowStatesOf(
  def: WorkflowDefinitionData,
  gateRulesFallback?: { version: number; gates: WorkflowDefinitionData["gates"] },
): WorkflowStates {
  const terminal = (name: string) => def.states[name]?.terminal === true;
  const outgoing = (t: Omit<WorkflowDefinitionData["transitions"][number], "from">): OutgoingEdge => ({
    to: t.to,
    toTerminal: terminal(t.to),
    by: t.by,
    guards: (t.guards ?? []).map(describeGuard),
    description: t.description,
  });
  const states = orderedStateNames(def).map((name): StateItem => {
    const s = def.states[name]!;
    return {
      name,
      description: s.description,
      initial: name === def.initial,
      terminal: s.terminal === true,
      success: s.success === true,
      requiresGates: s.requiresGates ?? [],
      tools: s.tools ?? "any",
      checkpoint: s.checkpoint === true,
      edges: def.transitions.filter((t) => t.from === name).map(outgoing),
    };
  });
  return {
    states,
    fromAnyActive: (def.fromAnyNonTerminal ?? []).map(outgoing),
    gates: gatesOf(def, gateRulesFallback),
  };
}

function gatesOf(
  def: WorkflowDefinitionData,
  fallback: { version: number; gates: WorkflowDefinitionData["gates"] } | undefined,
): GateItem[] {
  const own = def.gates;
  const rules = own ?? fallback?.gates ?? {};
  const names: string[] = [];
  const note = (gate: string) => {
    if (!names.includes(gate)) names.push(gate);
  };
  const requiredBy = new Map<string, string[]>();
  const guardsOn = new Map<string, string[]>();
  const push = (map: Map<string, string[]>, gate: string, where: string) => {
    note(gate);
    map.set(gate, [...(map.get(gate) ?? []), where]);
  };
  for (const name of orderedStateNames(def))
    for (const g of def.states[name]?.requiresGates ?? []) push(requiredBy, g, name);
  const edges = [
    ...def.transitions,
    ...(def.fromAnyNonTerminal ?? []).map((t) => ({ ...t, from: "any active state" })),
  ];
  for (const e of edges)
    for (const guard of e.guards ?? [])
      if (guard.kind === "gates_true") for (const g of guard.gates) push(guardsOn, g, `${e.from} → ${e.to}`);
  for (const g of Object.keys(rules)) note(g);
  return names.map((gate) => {
    const rule = (rules as Record<string, GateRule | undefined>)[gate] ?? null;
    return {
      gate,
      rule,
      ruleFrom: rule === null ? null : own ? "this version" : fallback ? { version: fallback.version } : null,
      requiredBy: requiredBy.get(gate) ?? [],
      guardsOn: guardsOn.get(gate) ?? [],
    };
  });
}
