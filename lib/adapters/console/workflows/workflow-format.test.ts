import { describe, expect, it } from "vitest";
import { agentTaskV1, agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1, deliveryV2 } from "@/lib/model/workflows/delivery";
import { diffWorkflowDefinitions } from "@/lib/model/workflows/workflow-diff";
import { describeWorkflowDiff } from "@/lib/adapters/console/workflows/workflow-diff-format";
import { workflowStatesOf } from "@/lib/adapters/console/workflows/workflow-states";

describe("workflowStatesOf", () => {
  it("lists each state with the edges out of it, who may take them and their guards in words", () => {
    const { states, fromAnyActive } = workflowStatesOf(deliveryV2);
    // In the order work flows: active states breadth-first from the initial one, then the ends, success first.
    expect(states.map((s) => s.name)).toEqual([
      "planning",
      "implementing",
      "reviewing",
      "testing",
      "complete",
      "failed",
      "cancelled",
      "expired",
    ]);
    const planning = states.find((s) => s.name === "planning")!;
    expect(planning).toMatchObject({ initial: true, terminal: false, tools: "any", checkpoint: false });
    expect(planning.edges).toEqual([
      {
        to: "implementing",
        toTerminal: false,
        by: ["agent"],
        guards: ["gate plan_approved true"],
        description: "Plan approved: implement",
      },
    ]);
    expect(states.find((s) => s.name === "complete")).toMatchObject({ terminal: true, success: true, edges: [] });
    // Cancel, fail, expire once each, not once per active state.
    expect(fromAnyActive.map((e) => [e.to, e.toTerminal])).toEqual([
      ["failed", true],
      ["cancelled", true],
      ["expired", true],
    ]);
  });

  it("orders states by the flow, not by the document's keys (the registry's JSONB reorders them)", () => {
    const scrambled = { ...agentTaskV1, states: Object.fromEntries(Object.entries(agentTaskV1.states).reverse()) };
    const names = workflowStatesOf(scrambled).states.map((s) => s.name);
    expect(names.slice(0, 4)).toEqual(["RECEIVED", "PLANNING", "READY", "RUNNING"]);
    expect(names.slice(-3)).toEqual(["COMPLETED", "CANCELLED", "PERMANENTLY_FAILED"]);
    expect(names).toEqual(workflowStatesOf(agentTaskV1).states.map((s) => s.name));
  });

  it("names every gate the definition uses, who sets it and where it is required or guarded", () => {
    const gates = workflowStatesOf(deliveryV2).gates;
    expect(gates.map((g) => g.gate)).toEqual([
      "plan_approved",
      "implementation_complete",
      "review_passed",
      "tests_passing",
      "security_approved",
      "deployment_approved",
    ]);
    const deploy = gates.find((g) => g.gate === "deployment_approved")!;
    expect(deploy.rule?.roles).toEqual(["operator", "admin"]);
    expect(deploy.ruleFrom).toBe("this version");
    expect(deploy.requiredBy).toEqual(["complete"]);
    expect(deploy.guardsOn).toEqual(["testing → complete"]);
    expect(gates.find((g) => g.gate === "plan_approved")).toMatchObject({ rule: null, ruleFrom: null });
  });

  it("says where an old version's gate rules come from when it declares none", () => {
    const old = workflowStatesOf(deliveryV1, { version: 2, gates: deliveryV2.gates }).gates;
    expect(old.find((g) => g.gate === "security_approved")).toMatchObject({
      rule: { roles: ["engineer", "admin"] },
      ruleFrom: { version: 2 },
    });
    expect(workflowStatesOf(deliveryV1).gates.find((g) => g.gate === "security_approved")?.rule).toBeNull();
  });

  it("reads a state's tools and checkpoint boundary when the document has them", () => {
    const def = structuredClone(agentTaskV2) as typeof agentTaskV2;
    def.states.RUNNING = { ...def.states.RUNNING!, tools: ["payments.refund"], checkpoint: true };
    expect(workflowStatesOf(def).states.find((s) => s.name === "RUNNING")).toMatchObject({
      tools: ["payments.refund"],
      checkpoint: true,
    });
  });
});

describe("describeWorkflowDiff", () => {
  it("says in words what agent-task v2 changed, a section per kind, empty sections left out", () => {
    const sections = describeWorkflowDiff(diffWorkflowDefinitions(agentTaskV1, agentTaskV2));
    expect(sections.map((s) => s.id)).toEqual(["edges"]);
    const lines = sections[0]!.lines;
    expect(lines[0]).toEqual({
      mark: "added",
      subject: "WAITING_FOR_TOOL → RECONCILING",
      details: ["“Outcome unknown: reconcile with the external system”", "taken by an agent or Verity itself"],
    });
    expect(lines.find((l) => l.subject === "any active state → CANCELLED")).toEqual({
      mark: "changed",
      subject: "any active state → CANCELLED",
      details: ["now also taken by Verity itself"],
    });
  });

  it("says who sets the gates delivery v2 added, and four eyes", () => {
    const [gates] = describeWorkflowDiff(diffWorkflowDefinitions(deliveryV1, deliveryV2));
    expect(gates?.id).toBe("gates");
    expect(gates?.lines[1]).toEqual({
      mark: "added",
      subject: "deployment_approved",
      details: [
        "set by an operator or an admin",
        "not by whoever set security_approved",
        "“An operator approves the deployment; not the person who approved security.”",
      ],
    });
  });

  it("words a changed state's fields: lists as members added and removed, values before and after", () => {
    const newer = structuredClone(deliveryV2) as typeof deliveryV2;
    newer.states.testing = { description: "Tests.", requiresGates: ["plan_approved", "review_passed"] };
    newer.states.reviewing!.terminal = false;
    const states = describeWorkflowDiff(diffWorkflowDefinitions(deliveryV2, newer)).find((s) => s.id === "states");
    expect(states?.lines).toEqual([
      { mark: "changed", subject: "reviewing", details: ["terminal: not set → no"] },
      {
        mark: "changed",
        subject: "testing",
        details: [
          "description: “Tests and security review.” → “Tests.”",
          "gates required while here: removed implementation_complete",
        ],
      },
    ]);
  });

  it("words guards added and removed on a kept edge, and a rejection changed", () => {
    const newer = structuredClone(agentTaskV2) as typeof agentTaskV2;
    newer.transitions = newer.transitions.map((t) =>
      t.from === "VALIDATING" && t.to === "COMPLETED"
        ? { ...t, guards: [{ kind: "gates_true", gates: ["tests_passing"] }] }
        : t,
    );
    newer.rejections = newer.rejections.map((r) => (r.from === "RUNNING" ? { ...r, message: "Validate first." } : r));
    const sections = describeWorkflowDiff(diffWorkflowDefinitions(agentTaskV2, newer));
    expect(sections.find((s) => s.id === "edges")?.lines).toEqual([
      {
        mark: "changed",
        subject: "VALIDATING → COMPLETED",
        details: ["guard added: gate tests_passing true", "guard removed: every mandatory subtask completed"],
      },
    ]);
    expect(sections.find((s) => s.id === "rejections")?.lines).toEqual([
      {
        mark: "changed",
        subject: "RUNNING → COMPLETED",
        details: ["message: “Completion requires validation: go through VALIDATING.” → “Validate first.”"],
      },
    ]);
  });
});
