import { describe, expect, it } from "vitest";
import { gateNames, type TaskPatch, type TaskState } from "@/lib/model/tasks/task-state";
import {
  checkChangeInvariants,
  checkStateInvariants,
  evaluateTransition,
  nextSteps,
} from "@/lib/model/tasks/transition-rules";
import {
  defineWorkflow,
  findEdge,
  isTerminal,
  type ActorKind,
  type WorkflowDefinition,
} from "@/lib/model/workflows/workflow-definition";
import { workflowDefinitions } from "@/lib/model/workflows";
import { agentTaskV1 } from "@/lib/model/workflows/agent-task";
import { deliveryV1 } from "@/lib/model/workflows/delivery";
import { gatesTrue, makeState, stateSatisfying } from "@/tests/helpers/task-states";

const actorKinds: ActorKind[] = ["agent", "user", "system"];
/** Every shipped definition, old versions included: tasks pinned to them still move. */
const definitions: readonly WorkflowDefinition[] = workflowDefinitions;

function invariantsOf(result: ReturnType<typeof evaluateTransition>): string[] {
  return result.ok ? [] : result.violations.map((v) => v.invariant);
}

/** The invariant a (from, to) pair without an edge must be rejected with. */
function expectedRejection(def: WorkflowDefinition, from: string, to: string): string {
  if (isTerminal(def, from)) return "terminal_state_is_final";
  return def.rejections.find((r) => r.from === from && r.to === to)?.invariant ?? "transition_defined";
}

describe.each(definitions.map((def) => [`${def.name} v${def.version}`, def] as const))("workflow %s", (_name, def) => {
  const states = Object.keys(def.states);
  const invalidPairs = states.flatMap((from) =>
    states.filter((to) => to !== from && !findEdge(def, from, to)).map((to) => [from, to] as const),
  );

  it("has edges and invalid pairs to test", () => {
    expect(def.edges.length).toBeGreaterThan(5);
    expect(invalidPairs.length).toBeGreaterThan(10);
    expect(def.edges.length + invalidPairs.length).toBe(states.length * (states.length - 1));
  });

  describe.each(def.edges.map((e) => [`${e.from} → ${e.to}`, e] as const))("edge %s", (_label, edge) => {
    it.each(edge.by)("is taken by a permitted %s when its guards hold", (actorKind) => {
      const current = stateSatisfying(def, edge);
      expect(checkStateInvariants(def, current)).toEqual([]);
      const result = evaluateTransition(def, current, { to: edge.to, patch: {}, actorKind });
      expect(invariantsOf(result)).toEqual([]);
      if (!result.ok) return;
      expect(result.next.status).toBe(edge.to);
      expect(result.edge).toBe(edge);
      // The evaluation is pure: the input state is not touched.
      expect(current.status).toBe(edge.from);
    });

    const refused = actorKinds.filter((k) => !edge.by.includes(k));
    if (refused.length > 0) {
      it.each(refused)("is refused to a %s", (actorKind) => {
        const result = evaluateTransition(def, stateSatisfying(def, edge), { to: edge.to, patch: {}, actorKind });
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect(result.reason).toBe("actor_not_permitted");
        expect(result.violations.map((v) => v.invariant)).toEqual(["actor_permitted"]);
      });
    }

    for (const guard of edge.guards ?? []) {
      if (guard.kind === "gates_true") {
        // Only the guard is under test: the state being left must itself stay valid.
        const guardOnly = guard.gates.filter((g) => !def.states[edge.from]?.requiresGates?.includes(g));
        it.each(guardOnly)(`is blocked (gate_required) while gate %s is false`, (gate) => {
          const current = stateSatisfying(def, edge);
          current.gates[gate] = false;
          expect(checkStateInvariants(def, current)).toEqual([]);
          const result = evaluateTransition(def, current, { to: edge.to, patch: {}, actorKind: edge.by[0] ?? "agent" });
          expect(invariantsOf(result)).toContain("gate_required");
          expect(result.ok || result.reason).toBe("invariant_violated");
        });
      } else {
        it("is blocked (mandatory_subtasks_completed) while a mandatory subtask is open", () => {
          const current = stateSatisfying(def, edge);
          current.subtasks = [
            ...current.subtasks,
            { id: "refund", title: "Refund", mandatory: true, status: "ACTIVE" },
          ];
          const result = evaluateTransition(def, current, { to: edge.to, patch: {}, actorKind: edge.by[0] ?? "agent" });
          expect(invariantsOf(result)[0]).toBe("mandatory_subtasks_completed");
          expect(result.ok ? "" : result.violations[0]?.message).toContain("refund");
        });
      }
    }
  });

  it.each(invalidPairs.map(([from, to]) => [from, to, expectedRejection(def, from, to)]))(
    "rejects %s → %s with %s, whoever asks",
    (from, to, invariant) => {
      const current = makeState(def, from, { gates: gatesTrue(gateNames) });
      for (const actorKind of actorKinds) {
        const result = evaluateTransition(def, current, { to, patch: {}, actorKind });
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect(result.reason).toBe("invariant_violated");
        expect(result.violations[0]?.invariant).toBe(invariant);
      }
    },
  );

  it.each(states.filter((s) => isTerminal(def, s)))("refuses even an in-place update of terminal %s", (status) => {
    const current = makeState(def, status, { gates: gatesTrue(gateNames) });
    const result = evaluateTransition(def, current, {
      to: status,
      patch: { artifacts: { review_report: "late" } },
      actorKind: "user",
    });
    expect(invariantsOf(result)).toEqual(["terminal_state_is_final"]);
  });

  it("rejects a status the workflow does not have", () => {
    const result = evaluateTransition(def, makeState(def, def.initial), {
      to: "DONE_ISH",
      patch: {},
      actorKind: "agent",
    });
    expect(result.ok ? "" : result.reason).toBe("unknown_status");
    expect(invariantsOf(result)).toEqual(["status_in_workflow"]);
  });

  it("lists next steps per actor kind, each with what blocks it", () => {
    for (const status of states) {
      for (const actorKind of actorKinds) {
        const steps = nextSteps(def, makeState(def, status), actorKind);
        const expected = def.edges.filter((e) => e.from === status && e.by.includes(actorKind));
        expect(steps.map((s) => s.edge)).toEqual(expected);
        for (const step of steps) {
          const result = evaluateTransition(def, makeState(def, status), { to: step.edge.to, patch: {}, actorKind });
          expect(step.blockedBy).toEqual(result.ok ? [] : result.violations);
        }
      }
    }
  });
});

describe("agent-task: the invalid transitions named by the audit", () => {
  const def = agentTaskV1;
  const agent = { patch: {}, actorKind: "agent" as const };
  const cases: Array<[string, string, string]> = [
    ["COMPLETED", "RUNNING", "terminal_state_is_final"],
    ["CANCELLED", "RUNNING", "terminal_state_is_final"],
    ["PERMANENTLY_FAILED", "RECOVERING", "terminal_state_is_final"],
    ["WAITING_FOR_TOOL", "COMPLETED", "completion_requires_validation"],
    ["RUNNING", "COMPLETED", "completion_requires_validation"],
    ["FAILED", "COMPLETED", "failure_requires_recovery"],
  ];
  it.each(cases)("%s → %s violates %s", (from, to, invariant) => {
    const result = evaluateTransition(def, makeState(def, from), { ...agent, to });
    expect(result.ok ? "" : result.violations[0]?.invariant).toBe(invariant);
  });

  it("RUNNING → COMPLETED with an open mandatory subtask names both broken rules", () => {
    const current = makeState(def, "RUNNING", {
      subtasks: [{ id: "refund", title: "Refund", mandatory: true, status: "ACTIVE" }],
    });
    const result = evaluateTransition(def, current, { ...agent, to: "COMPLETED" });
    expect(invariantsOf(result)).toEqual(["completion_requires_validation", "mandatory_subtasks_completed"]);
  });

  it("VALIDATING → COMPLETED waits for every mandatory subtask, not optional ones", () => {
    const open = makeState(def, "VALIDATING", {
      subtasks: [
        { id: "refund", title: "Refund", mandatory: true, status: "PENDING" },
        { id: "email", title: "Email", mandatory: false, status: "FAILED" },
      ],
    });
    expect(invariantsOf(evaluateTransition(def, open, { ...agent, to: "COMPLETED" }))).toEqual([
      "mandatory_subtasks_completed",
    ]);
    // Completing the subtask in the same transition is allowed: the guard reads the state being written.
    const together = evaluateTransition(def, open, {
      ...agent,
      to: "COMPLETED",
      patch: { subtasks: [{ id: "refund", status: "COMPLETED" }] },
    });
    expect(invariantsOf(together)).toEqual([]);
  });

  it("a FAILED mandatory subtask still blocks completion", () => {
    const current = makeState(def, "VALIDATING", {
      subtasks: [{ id: "refund", title: "Refund", mandatory: true, status: "FAILED" }],
    });
    expect(invariantsOf(evaluateTransition(def, current, { ...agent, to: "COMPLETED" }))).toEqual([
      "mandatory_subtasks_completed",
    ]);
  });

  it("only a user resolves an escalation", () => {
    const current = makeState(def, "WAITING_FOR_HUMAN");
    expect(evaluateTransition(def, current, { ...agent, to: "HUMAN_RESOLVED" })).toMatchObject({
      ok: false,
      reason: "actor_not_permitted",
    });
    expect(evaluateTransition(def, current, { to: "HUMAN_RESOLVED", patch: {}, actorKind: "system" })).toMatchObject({
      ok: false,
      reason: "actor_not_permitted",
    });
    expect(evaluateTransition(def, current, { to: "HUMAN_RESOLVED", patch: {}, actorKind: "user" })).toMatchObject({
      ok: true,
    });
  });

  it("the system may recover and give up but never cancels or runs the plan", () => {
    const system = { patch: {}, actorKind: "system" as const };
    expect(evaluateTransition(def, makeState(def, "FAILED"), { ...system, to: "RECOVERING" }).ok).toBe(true);
    expect(evaluateTransition(def, makeState(def, "RECOVERING"), { ...system, to: "PERMANENTLY_FAILED" }).ok).toBe(
      true,
    );
    expect(evaluateTransition(def, makeState(def, "RUNNING"), { ...system, to: "CANCELLED" })).toMatchObject({
      reason: "actor_not_permitted",
    });
    expect(evaluateTransition(def, makeState(def, "READY"), { ...system, to: "RUNNING" })).toMatchObject({
      reason: "actor_not_permitted",
    });
  });
});

describe("delivery: gates", () => {
  const def = deliveryV1;
  const agent = { actorKind: "agent" as const };

  it("leaving planning needs plan_approved (gate_required)", () => {
    const result = evaluateTransition(def, makeState(def, "planning"), { ...agent, to: "implementing", patch: {} });
    expect(invariantsOf(result)).toEqual(["gate_required", "gates_required_by_status"]);
  });

  it("a later stage keeps requiring earlier gates: un-approving the plan mid-review is refused", () => {
    const current = makeState(def, "reviewing");
    const result = evaluateTransition(def, current, {
      ...agent,
      to: "reviewing",
      patch: { gates: { plan_approved: false } },
    });
    expect(invariantsOf(result)).toEqual(["gates_required_by_status"]);
    expect(result.ok ? "" : result.violations[0]?.message).toContain("plan_approved");
  });

  it("shipping needs tests, security and deployment approval", () => {
    const current = makeState(def, "testing");
    for (const gate of ["tests_passing", "security_approved", "deployment_approved"] as const) {
      const gates = gatesTrue(gateNames);
      gates[gate] = false;
      const result = evaluateTransition(def, { ...current, gates }, { ...agent, to: "complete", patch: {} });
      expect(invariantsOf(result)).toEqual(["gate_required", "gates_required_by_status"]);
      expect(result.ok ? "" : result.violations[0]?.message).toContain(gate);
    }
  });

  it("skipping a stage is not a transition even with every gate true", () => {
    const current = makeState(def, "planning", { gates: gatesTrue(gateNames) });
    expect(invariantsOf(evaluateTransition(def, current, { ...agent, to: "testing", patch: {} }))).toEqual([
      "transition_defined",
    ]);
  });

  it("a user may cancel but not fail or move work forward", () => {
    const current = makeState(def, "implementing", { gates: gatesTrue(gateNames) });
    expect(evaluateTransition(def, current, { to: "cancelled", patch: {}, actorKind: "user" }).ok).toBe(true);
    expect(evaluateTransition(def, current, { to: "failed", patch: {}, actorKind: "user" })).toMatchObject({
      reason: "actor_not_permitted",
    });
    expect(evaluateTransition(def, current, { to: "reviewing", patch: {}, actorKind: "user" })).toMatchObject({
      reason: "actor_not_permitted",
    });
  });
});

describe("the declared guards a registered workflow may put on an edge", () => {
  const def = defineWorkflow({
    ...deliveryV1,
    name: "delivery-guarded",
    transitions: deliveryV1.transitions.map((t) =>
      t.from === "planning" && t.to === "implementing"
        ? { ...t, guards: [{ kind: "artifact_present", artifact: "implementation_plan" }] }
        : t.from === "testing" && t.to === "complete"
          ? { ...t, guards: [...(t.guards ?? []), { kind: "budget_within_commitment" }] }
          : t,
    ),
  });
  const agent = { actorKind: "agent" as const };
  const planning = makeState(def, "planning", { gates: gatesTrue(["plan_approved"]) });

  it("artifact_present refuses leaving with the artifact absent or blank, naming the guard", () => {
    for (const artifacts of [{}, { implementation_plan: "  " }]) {
      const result = evaluateTransition(def, { ...planning, artifacts }, { ...agent, to: "implementing", patch: {} });
      expect(invariantsOf(result)).toEqual(["guard_artifact_present"]);
      expect(result.ok ? "" : result.violations[0]?.message).toContain("implementation_plan");
    }
  });

  it("artifact_present holds once the artifact is in the state, or arrives with the transition's patch", () => {
    const withPlan = { ...planning, artifacts: { implementation_plan: "Step 1." } };
    expect(evaluateTransition(def, withPlan, { ...agent, to: "implementing", patch: {} }).ok).toBe(true);
    const patched = evaluateTransition(def, planning, {
      ...agent,
      to: "implementing",
      patch: { artifacts: { implementation_plan: "Step 1." } },
    });
    expect(invariantsOf(patched)).toEqual([]);
  });

  it("budget_within_commitment refuses leaving once spending passes the commitment, naming the guard", () => {
    const testing = makeState(def, "testing", { gates: gatesTrue(gateNames) });
    expect(evaluateTransition(def, testing, { ...agent, to: "complete", patch: {} }).ok).toBe(true);
    const over = evaluateTransition(def, testing, {
      ...agent,
      to: "complete",
      patch: { budget: { currency_spent_usd: 11 } },
    });
    expect(invariantsOf(over)).toContain("guard_budget_within_commitment");
  });
});

describe("state and change invariants", () => {
  const def = agentTaskV1;
  const running = (overrides: Partial<TaskState> = {}) => makeState(def, "RUNNING", overrides);
  const inPlace = (current: TaskState, patch: TaskPatch) =>
    invariantsOf(evaluateTransition(def, current, { to: current.status, patch, actorKind: "agent" }));

  it("an in-place update with a valid patch is allowed in any non-terminal state", () => {
    for (const status of Object.keys(def.states).filter((s) => !isTerminal(def, s))) {
      expect(inPlace(makeState(def, status), { budget: { hops_used: 4 }, artifacts: { test_results: "ok" } })).toEqual(
        [],
      );
    }
  });

  it.each(["currency_spent_usd", "tokens_spent", "hops_used"] as const)("budget_never_decreases: %s", (key) => {
    const current = running();
    expect(inPlace(current, { budget: { [key]: current.budget[key] - 1 } })).toEqual(["budget_never_decreases"]);
    expect(inPlace(current, { budget: { [key]: current.budget[key] } })).toEqual([]);
    expect(
      checkChangeInvariants(current, { ...current, budget: { ...current.budget, [key]: current.budget[key] + 1 } }),
    ).toEqual([]);
  });

  it("the commitment may shrink, but never below what was spent (budget_within_commitment)", () => {
    const current = running();
    expect(inPlace(current, { budget: { currency_committed_usd: current.budget.currency_spent_usd } })).toEqual([]);
    expect(inPlace(current, { budget: { currency_committed_usd: current.budget.currency_spent_usd - 0.01 } })).toEqual([
      "budget_within_commitment",
    ]);
    expect(inPlace(current, { budget: { currency_spent_usd: current.budget.currency_committed_usd + 1 } })).toEqual([
      "budget_within_commitment",
    ]);
  });

  it("mandatory_flag_is_sticky: a mandatory subtask cannot be made optional, an optional one can become mandatory", () => {
    const current = running({
      subtasks: [
        { id: "a", title: "A", mandatory: true, status: "ACTIVE" },
        { id: "b", title: "B", mandatory: false, status: "ACTIVE" },
      ],
    });
    expect(inPlace(current, { subtasks: [{ id: "a", mandatory: false }] })).toEqual(["mandatory_flag_is_sticky"]);
    expect(inPlace(current, { subtasks: [{ id: "b", mandatory: true }] })).toEqual([]);
  });

  it("agent_sets_disjoint: an agent is active or finished, not both", () => {
    const current = running({ active_agents: ["spiffe://a", "spiffe://b"] });
    expect(inPlace(current, { completed_agents: ["spiffe://b"] })).toEqual(["agent_sets_disjoint"]);
    expect(inPlace(current, { failed_agents: ["spiffe://a"] })).toEqual(["agent_sets_disjoint"]);
    expect(inPlace(current, { active_agents: ["spiffe://a"], completed_agents: ["spiffe://b"] })).toEqual([]);
  });

  it("subtask_ids_unique and status_in_workflow are checked on any stored state", () => {
    const dup = running({
      subtasks: [
        { id: "a", title: "A", mandatory: false, status: "ACTIVE" },
        { id: "a", title: "A again", mandatory: false, status: "ACTIVE" },
      ],
    });
    expect(checkStateInvariants(def, dup).map((v) => v.invariant)).toEqual(["subtask_ids_unique"]);
    expect(checkStateInvariants(def, running({ status: "running" })).map((v) => v.invariant)).toEqual([
      "status_in_workflow",
    ]);
  });

  it("reports every broken invariant at once, each once", () => {
    const current = running({ active_agents: ["spiffe://a"] });
    const result = evaluateTransition(def, current, {
      to: "COMPLETED",
      patch: {
        budget: { hops_used: 0, currency_spent_usd: 1e6 },
        completed_agents: ["spiffe://a"],
        subtasks: [{ id: "x", mandatory: true }],
      },
      actorKind: "agent",
    });
    expect(invariantsOf(result).sort()).toEqual(
      [
        "agent_sets_disjoint",
        "budget_never_decreases",
        "budget_within_commitment",
        "completion_requires_validation",
        "mandatory_subtasks_completed",
      ].sort(),
    );
  });
});
