import { describe, expect, it } from "vitest";
import { diffWorkflowDefinitions, edgeKey } from "@/lib/model/workflows/workflow-diff";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import { agentTaskV1, agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1, deliveryV2 } from "@/lib/model/workflows/delivery";

const base: WorkflowDefinitionData = {
  name: "ship",
  version: 1,
  title: "Ship",
  description: "Plan and ship.",
  initial: "planning",
  states: {
    planning: { description: "Planning." },
    building: { description: "Building.", requiresGates: ["plan_approved"] },
    done: { description: "Done.", terminal: true, success: true },
    dropped: { description: "Dropped.", terminal: true },
  },
  transitions: [
    {
      from: "planning",
      to: "building",
      by: ["agent"],
      guards: [{ kind: "gates_true", gates: ["plan_approved"] }],
      description: "Plan approved",
    },
    { from: "building", to: "done", by: ["agent"], description: "Built" },
  ],
  fromAnyNonTerminal: [{ to: "dropped", by: ["user"], description: "Drop" }],
  rejections: [{ from: "planning", to: "done", invariant: "no_shortcut", message: "Build first." }],
  gates: { plan_approved: { roles: ["operator"], description: "An operator approves the plan." } },
};

function next(change: (d: WorkflowDefinitionData) => void): WorkflowDefinitionData {
  const copy = structuredClone(base);
  copy.version = 2;
  change(copy);
  return copy;
}

describe("diffWorkflowDefinitions", () => {
  it("finds nothing but the version between a definition and its copy, whatever the key order", () => {
    const reordered = next((d) => {
      d.states = Object.fromEntries(Object.entries(d.states).reverse());
      d.transitions[0]!.guards = [{ gates: ["plan_approved"], kind: "gates_true" } as never];
    });
    const diff = diffWorkflowDefinitions(base, reordered);
    expect(diff.identical).toBe(true);
    expect(diff.count).toBe(0);
  });

  it("ignores what a loaded definition adds (digest, expanded edges)", () => {
    const diff = diffWorkflowDefinitions(agentTaskV1, { ...agentTaskV1, version: 9 });
    expect(diff.identical).toBe(true);
  });

  it("names states added, removed and changed, field by field, with a list's members added and removed", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        d.states.reviewing = { description: "Review." };
        delete d.states.dropped;
        d.fromAnyNonTerminal = [];
        d.states.building = { description: "Building it.", requiresGates: ["plan_approved", "review_passed"] };
      }),
    );
    expect(diff.states.added).toEqual([{ name: "reviewing", state: { description: "Review." } }]);
    expect(diff.states.removed.map((s) => s.name)).toEqual(["dropped"]);
    expect(diff.states.changed).toEqual([
      {
        name: "building",
        before: base.states.building,
        after: { description: "Building it.", requiresGates: ["plan_approved", "review_passed"] },
        changes: [
          { field: "description", before: "Building.", after: "Building it." },
          {
            field: "requiresGates",
            before: ["plan_approved"],
            after: ["plan_approved", "review_passed"],
            added: ["review_passed"],
            removed: [],
          },
        ],
      },
    ]);
  });

  it("treats a field a later format adds like any other (a state's tools, a boundary)", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        Object.assign(d.states.building!, { tools: ["deploy.release"], checkpoint: true });
      }),
    );
    expect(diff.states.changed[0]?.changes).toEqual([
      { field: "tools", before: undefined, after: ["deploy.release"], added: ["deploy.release"], removed: [] },
      { field: "checkpoint", before: undefined, after: true },
    ]);
  });

  it("names edges added and removed, and on a kept edge who may take it and its guards, as sets", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        d.transitions[0] = {
          from: "planning",
          to: "building",
          by: ["system", "agent"],
          guards: [{ kind: "mandatory_subtasks_completed" }],
          description: "Plan approved",
        };
        d.transitions[1] = { from: "building", to: "planning", by: ["agent"], description: "Replan" };
      }),
    );
    expect(diff.edges.added.map((e) => e.key)).toEqual([edgeKey("building", "planning")]);
    expect(diff.edges.removed.map((e) => e.key)).toEqual(["building→done"]);
    expect(diff.edges.changed).toHaveLength(1);
    const changed = diff.edges.changed[0]!;
    expect(changed).toMatchObject({
      key: "planning→building",
      byAdded: ["system"],
      byRemoved: [],
      guardsAdded: [{ kind: "mandatory_subtasks_completed" }],
      guardsRemoved: [{ kind: "gates_true", gates: ["plan_approved"] }],
      changes: [],
    });
  });

  it("keeps an edge from any active state as one edge, keyed apart from an explicit edge to the same state", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        d.fromAnyNonTerminal = [{ to: "dropped", by: ["user", "system"], description: "Drop it" }];
        d.transitions.push({ from: "building", to: "dropped", by: ["agent"], description: "Give up" });
      }),
    );
    expect(diff.edges.added).toMatchObject([{ key: "building→dropped", from: "building" }]);
    expect(diff.edges.changed).toMatchObject([
      {
        key: "*→dropped",
        from: null,
        byAdded: ["system"],
        changes: [{ field: "description", before: "Drop", after: "Drop it" }],
      },
    ]);
  });

  it("names gate rules added, removed and changed (roles, four eyes)", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        d.gates = {
          plan_approved: { roles: ["operator", "admin"], notSetBySameAs: ["review_passed"], description: "x" },
          deployment_approved: { roles: ["admin"], description: "Admins ship." },
        };
      }),
    );
    expect(diff.gates.added).toEqual([
      { gate: "deployment_approved", rule: { roles: ["admin"], description: "Admins ship." } },
    ]);
    expect(diff.gates.changed[0]?.changes).toEqual([
      { field: "roles", before: ["operator"], after: ["operator", "admin"], added: ["admin"], removed: [] },
      { field: "notSetBySameAs", before: undefined, after: ["review_passed"], added: ["review_passed"], removed: [] },
      { field: "description", before: "An operator approves the plan.", after: "x" },
    ]);
    const gone = diffWorkflowDefinitions(
      base,
      next((d) => delete d.gates),
    );
    expect(gone.gates.removed.map((g) => g.gate)).toEqual(["plan_approved"]);
  });

  it("names rejections added, removed and changed", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        d.rejections = [
          { from: "planning", to: "done", invariant: "build_before_done", message: "Build first." },
          { from: "building", to: "planning", invariant: "no_going_back", message: "Forward only." },
        ];
      }),
    );
    expect(diff.rejections.added.map((r) => r.key)).toEqual(["building→planning"]);
    expect(diff.rejections.changed[0]).toMatchObject({
      key: "planning→done",
      changes: [{ field: "invariant", before: "no_shortcut", after: "build_before_done" }],
    });
    const none = diffWorkflowDefinitions(
      base,
      next((d) => (d.rejections = [])),
    );
    expect(none.rejections.removed.map((r) => r.invariant)).toEqual(["no_shortcut"]);
  });

  it("names the document's own fields: title, description, initial state", () => {
    const diff = diffWorkflowDefinitions(
      base,
      next((d) => {
        d.title = "Ship it";
        d.initial = "building";
      }),
    );
    expect(diff.document).toEqual([
      { field: "title", before: "Ship", after: "Ship it" },
      { field: "initial", before: "planning", after: "building" },
    ]);
    expect(diff.count).toBe(2);
  });

  it("reads the shipped versions: agent-task v2 adds the ledger's edges and lets Verity take the review's", () => {
    const diff = diffWorkflowDefinitions(agentTaskV1, agentTaskV2);
    expect(diff.states.added).toEqual([]);
    expect(diff.states.changed).toEqual([]);
    expect(diff.edges.added.map((e) => e.key)).toEqual([
      "WAITING_FOR_TOOL→RECONCILING",
      "RECONCILING→VALIDATING",
      "HUMAN_RESOLVED→VALIDATING",
    ]);
    expect(diff.edges.changed.map((e) => [e.key, e.byAdded])).toEqual([
      ["WAITING_FOR_HUMAN→HUMAN_RESOLVED", ["system"]],
      ["HUMAN_RESOLVED→RUNNING", ["system"]],
      ["*→CANCELLED", ["system"]],
    ]);
    expect(diff.edges.removed).toEqual([]);
    expect(diff.count).toBe(6);
  });

  it("reads the shipped versions: delivery v2 only adds who sets the two human gates", () => {
    const diff = diffWorkflowDefinitions(deliveryV1, deliveryV2);
    expect(diff.gates.added.map((g) => g.gate)).toEqual(["security_approved", "deployment_approved"]);
    expect(diff.count).toBe(2);
    // Backwards, the same facts: what v2 added, v1 lacks.
    expect(diffWorkflowDefinitions(deliveryV2, deliveryV1).gates.removed.map((g) => g.gate)).toEqual([
      "security_approved",
      "deployment_approved",
    ]);
  });
});
