import type { InvariantViolation } from "@/lib/core/errors";
import type { Role } from "@/lib/generated/prisma/enums";
import { gateRulesOf } from "@/lib/model/workflows";
import {
  edgesFrom,
  findEdge,
  isTerminal,
  type ActorKind,
  type Guard,
  type TransitionDefinition,
  type WorkflowDefinition,
} from "@/lib/model/workflows/workflow-definition";
import { applyPatch, gateNames, type GateName, type TaskPatch, type TaskState } from "@/lib/model/tasks/task-state";

/**
 * The rules of a transition, as pure functions: given a definition, the
 * current state and a proposal, either the next state or every invariant the
 * proposal would break. No I/O here; lib/stores/tasks/task-transitions.ts applies the result
 * under compare-and-swap.
 */
export interface TransitionProposal {
  /** Target status; equal to the current one for an in-place update. */
  to: string;
  patch: TaskPatch;
  actorKind: ActorKind;
  /** A person's approval of one human gate, checked by lib/use-cases/tasks/approve-gate.ts: the only way such a gate is set. */
  gateApproval?: GateApproval;
}

/** A person with `role` approves `gate` in this transition. */
export interface GateApproval {
  gate: GateName;
  role: Role;
}

export type TransitionEvaluation =
  | { ok: true; next: TaskState; edge: TransitionDefinition | undefined }
  | {
      ok: false;
      reason: "unknown_status" | "actor_not_permitted" | "invariant_violated";
      violations: InvariantViolation[];
    };

/** Invariants every stored state must satisfy, whatever led to it. */
export function checkStateInvariants(def: WorkflowDefinition, state: TaskState): InvariantViolation[] {
  const violations: InvariantViolation[] = [];
  const stateDef = def.states[state.status];
  if (!stateDef) {
    return [
      {
        invariant: "status_in_workflow",
        message: `Status ${state.status} is not a state of workflow ${def.name} v${def.version}.`,
      },
    ];
  }
  const missingGates = (stateDef.requiresGates ?? []).filter((g) => !state.gates[g]);
  if (missingGates.length > 0) {
    violations.push({
      invariant: "gates_required_by_status",
      message: `Status ${state.status} requires gate(s) ${missingGates.join(", ")} to be true.`,
    });
  }
  if (stateDef.success) {
    const open = openMandatorySubtasks(state);
    if (open.length > 0) {
      violations.push({
        invariant: "mandatory_subtasks_completed",
        message: `Completion requires every mandatory subtask completed; still open: ${open.join(", ")}.`,
      });
    }
  }
  if (state.budget.currency_spent_usd > state.budget.currency_committed_usd) {
    violations.push({
      invariant: "budget_within_commitment",
      message: `Spent ${state.budget.currency_spent_usd} USD exceeds the committed ${state.budget.currency_committed_usd} USD.`,
    });
  }
  const active = new Set(state.active_agents);
  const overlap = [...state.completed_agents, ...state.failed_agents].filter((a) => active.has(a));
  if (overlap.length > 0) {
    violations.push({
      invariant: "agent_sets_disjoint",
      message: `Agent(s) ${[...new Set(overlap)].join(", ")} cannot be active and finished at once.`,
    });
  }
  const ids = state.subtasks.map((s) => s.id);
  if (new Set(ids).size !== ids.length) {
    violations.push({ invariant: "subtask_ids_unique", message: "Subtask ids must be unique." });
  }
  return violations;
}

/** Invariants between two consecutive versions. */
export function checkChangeInvariants(before: TaskState, after: TaskState): InvariantViolation[] {
  const violations: InvariantViolation[] = [];
  const shrunk = (["currency_spent_usd", "tokens_spent", "hops_used"] as const).filter(
    (k) => after.budget[k] < before.budget[k],
  );
  if (shrunk.length > 0) {
    violations.push({
      invariant: "budget_never_decreases",
      message: `Consumed budget cannot go down (${shrunk.join(", ")}).`,
    });
  }
  // 0 declares no limit (lib/model/executions/budget-reservation.ts): setting a declared one to 0 would lift it.
  if (before.budget.currency_committed_usd > 0 && after.budget.currency_committed_usd === 0) {
    violations.push({
      invariant: "budget_commitment_kept",
      message: `The task committed ${before.budget.currency_committed_usd} USD; a declared commitment can be changed but not withdrawn (0 would mean no limit).`,
    });
  }
  const unflagged = before.subtasks.filter(
    (s) => s.mandatory && after.subtasks.find((a) => a.id === s.id)?.mandatory === false,
  );
  if (unflagged.length > 0) {
    violations.push({
      invariant: "mandatory_flag_is_sticky",
      message: `Subtask(s) ${unflagged.map((s) => s.id).join(", ")} are mandatory and stay so.`,
    });
  }
  return violations;
}

export function evaluateGuard(guard: Guard, state: TaskState, from: string): InvariantViolation | undefined {
  switch (guard.kind) {
    case "gates_true": {
      const missing = guard.gates.filter((g) => !state.gates[g]);
      return missing.length === 0
        ? undefined
        : {
            invariant: "gate_required",
            message: `Cannot leave ${from} before gate(s) ${missing.join(", ")} are true.`,
          };
    }
    case "mandatory_subtasks_completed": {
      const open = openMandatorySubtasks(state);
      return open.length === 0
        ? undefined
        : {
            invariant: "mandatory_subtasks_completed",
            message: `Completion requires every mandatory subtask completed; still open: ${open.join(", ")}.`,
          };
    }
    case "artifact_present": {
      const value = state.artifacts[guard.artifact];
      // A blank plan or an empty file list is no artifact: the guard exists to stop a stage being left with nothing to show.
      const present = Array.isArray(value) ? value.length > 0 : typeof value === "string" && value.trim() !== "";
      return present
        ? undefined
        : {
            invariant: "guard_artifact_present",
            message: `Cannot leave ${from} before artifact ${guard.artifact} is present (guard artifact_present).`,
          };
    }
    case "budget_within_commitment":
      return state.budget.currency_spent_usd <= state.budget.currency_committed_usd
        ? undefined
        : {
            invariant: "guard_budget_within_commitment",
            message: `Cannot leave ${from}: spent ${state.budget.currency_spent_usd} USD exceeds the committed ${state.budget.currency_committed_usd} USD (guard budget_within_commitment).`,
          };
  }
}

export function evaluateTransition(
  def: WorkflowDefinition,
  current: TaskState,
  proposal: TransitionProposal,
): TransitionEvaluation {
  if (!def.states[proposal.to]) {
    return {
      ok: false,
      reason: "unknown_status",
      violations: [
        { invariant: "status_in_workflow", message: `${proposal.to} is not a state of workflow ${def.name}.` },
      ],
    };
  }
  const from = current.status;
  const next: TaskState = { ...applyPatch(current, proposal.patch), status: proposal.to };
  const violations: InvariantViolation[] = [];

  if (isTerminal(def, from)) {
    violations.push({
      invariant: "terminal_state_is_final",
      message: `${from} is terminal: a finished task never changes or re-enters execution.`,
    });
    return { ok: false, reason: "invariant_violated", violations };
  }

  const gateRefusals = humanGateRefusals(def, current, next, proposal);
  if (gateRefusals.length > 0) return { ok: false, reason: "actor_not_permitted", violations: gateRefusals };

  let edge: TransitionDefinition | undefined;
  if (proposal.to !== from) {
    edge = findEdge(def, from, proposal.to);
    const named = def.rejections.find((r) => r.from === from && r.to === proposal.to);
    if (named) violations.push({ invariant: named.invariant, message: named.message });
    else if (!edge)
      violations.push({
        invariant: "transition_defined",
        message: `Workflow ${def.name} has no transition ${from} → ${proposal.to}.`,
      });
    if (edge && !edge.by.includes(proposal.actorKind)) {
      return {
        ok: false,
        reason: "actor_not_permitted",
        violations: [
          {
            invariant: "actor_permitted",
            message: `${from} → ${proposal.to} may be taken by ${edge.by.join(" or ")}, not by a ${proposal.actorKind}.`,
          },
        ],
      };
    }
    for (const guard of edge?.guards ?? []) {
      const v = evaluateGuard(guard, next, from);
      if (v) violations.push(v);
    }
  }
  violations.push(...checkStateInvariants(def, next), ...checkChangeInvariants(current, next));
  const unique = violations.filter((v, i) => violations.findIndex((w) => w.invariant === v.invariant) === i);
  return unique.length > 0 ? { ok: false, reason: "invariant_violated", violations: unique } : { ok: true, next, edge };
}

/**
 * A human gate set true in this change without a person's approval of it
 * (an agent's patch, or any other path than the approval form): refused,
 * naming the gate and the roles that may set it. Withdrawing a gate only
 * holds work back and is not refused here.
 */
export function humanGateRefusals(
  def: WorkflowDefinition,
  before: TaskState,
  after: TaskState,
  proposal: Pick<TransitionProposal, "actorKind" | "gateApproval">,
): InvariantViolation[] {
  const rules = gateRulesOf(def);
  const refusals: InvariantViolation[] = [];
  for (const gate of gateNames) {
    const rule = rules[gate];
    if (!rule || before.gates[gate] || !after.gates[gate]) continue;
    const approval = proposal.gateApproval;
    if (proposal.actorKind === "user" && approval?.gate === gate && rule.roles.includes(approval.role)) continue;
    const who =
      proposal.actorKind === "user" && approval?.gate === gate
        ? `not by the ${approval.role} role`
        : proposal.actorKind === "user"
          ? "only through the approval form on the task's page, with a reason"
          : `not by ${proposal.actorKind === "agent" ? "an agent" : "Verity itself"}`;
    refusals.push({
      invariant: "gate_set_by_people",
      message: `Gate ${gate} of workflow ${def.name} is a person's decision: it is set by a person with the ${rule.roles.join(" or ")} role, through the approval form on the task's page in the console; ${who}.`,
    });
  }
  return refusals;
}

export interface NextStep {
  edge: TransitionDefinition;
  /** Empty when the transition is allowed right now. */
  blockedBy: InvariantViolation[];
}

/** The edges out of the current status for this kind of actor, each with what blocks it now. */
export function nextSteps(def: WorkflowDefinition, state: TaskState, actorKind: ActorKind): NextStep[] {
  return edgesFrom(def, state.status)
    .filter((edge) => edge.by.includes(actorKind))
    .map((edge) => {
      const result = evaluateTransition(def, state, { to: edge.to, patch: {}, actorKind });
      return { edge, blockedBy: result.ok ? [] : result.violations };
    });
}

function openMandatorySubtasks(state: TaskState): string[] {
  return state.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED").map((s) => s.id);
}
