import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import { workflowDefinitions } from "@/lib/model/workflows";
import { agentTaskV1 } from "@/lib/model/workflows/agent-task";
import { deliveryV1, deliveryV2 } from "@/lib/model/workflows/delivery";
import {
  declaredEdges,
  validateWorkflowDefinition,
  type WorkflowDefinitionDocumentSchema,
} from "@/lib/model/workflows/validate-definition";
import type { WorkflowDefinition, WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";

/** The document a shipped definition would be published as: its data, without what defineWorkflow derives. */
function documentOf(def: WorkflowDefinition): WorkflowDefinitionData {
  const { digest: _digest, edges: _edges, ...data } = structuredClone(def);
  return data;
}

const agentTask = documentOf(agentTaskV1);
const delivery = documentOf(deliveryV1);
const deliveryWithGates = documentOf(deliveryV2);
const nextTransition = `$.transitions[${agentTask.transitions.length}]`;

function codesAndPaths(doc: unknown) {
  const result = validateWorkflowDefinition(doc);
  return {
    problems: result.ok ? [] : result.problems.map(({ code, path }) => ({ code, path })),
    warnings: result.warnings.map(({ code, path }) => ({ code, path })),
  };
}

describe("the document schema", () => {
  it("is exactly WorkflowDefinitionData, so a published document round-trips into the engine's type", () => {
    expectTypeOf<z.infer<typeof WorkflowDefinitionDocumentSchema>>().toEqualTypeOf<WorkflowDefinitionData>();
  });
});

describe("validateWorkflowDefinition on the shipped definitions", () => {
  it.each(workflowDefinitions.map((def) => [`${def.name} v${def.version}`, def] as const))(
    "%s validates with no problem and no warning, and comes back unchanged",
    (_, def) => {
      const result = validateWorkflowDefinition(documentOf(def));
      expect(result).toEqual({ ok: true, definition: documentOf(def), warnings: [] });
    },
  );

  it.each(workflowDefinitions.map((def) => [`${def.name} v${def.version}`, def] as const))(
    "%s: the validator's edges are the engine's edges, in the engine's order",
    (_, def) => {
      expect(declaredEdges(documentOf(def)).map((e) => `${e.from}>${e.to}`)).toEqual(
        def.edges.map((e) => `${e.from}>${e.to}`),
      );
    },
  );
});

type Row = [rule: string, doc: unknown, problems: Array<{ code: string; path: string }>];

const graphRows: Row[] = [
  [
    "an edge to an unknown state",
    {
      ...agentTask,
      transitions: [...agentTask.transitions, { from: "RUNNING", to: "DONE", by: ["agent"], description: "x" }],
    },
    [{ code: "unknown_state", path: `${nextTransition}.to` }],
  ],
  [
    "an edge from an unknown state",
    {
      ...agentTask,
      transitions: [...agentTask.transitions, { from: "IDLE", to: "RUNNING", by: ["agent"], description: "x" }],
    },
    [{ code: "unknown_state", path: `${nextTransition}.from` }],
  ],
  [
    "an unknown initial state (reachability is not reported from it)",
    { ...agentTask, initial: "START" },
    [{ code: "unknown_state", path: "$.initial" }],
  ],
  [
    "a rejection naming an unknown state",
    { ...agentTask, rejections: agentTask.rejections.map((r, i) => (i === 0 ? { ...r, from: "WAITING" } : r)) },
    [{ code: "unknown_state", path: "$.rejections[0].from" }],
  ],
  [
    "a from-any edge to an unknown state",
    {
      ...delivery,
      fromAnyNonTerminal: [...(delivery.fromAnyNonTerminal ?? []), { to: "aborted", by: ["user"], description: "x" }],
    },
    [{ code: "unknown_state", path: "$.fromAnyNonTerminal[3].to" }],
  ],
  [
    "an unreachable state",
    { ...agentTask, states: { ...agentTask.states, ORPHAN: { description: "Nothing leads here." } } },
    [{ code: "unreachable_state", path: "$.states.ORPHAN" }],
  ],
  [
    "a state reached only by the from-any edges it lost",
    { ...agentTask, fromAnyNonTerminal: undefined },
    [{ code: "unreachable_state", path: "$.states.CANCELLED" }],
  ],
  [
    "a non-terminal state with no path to a terminal one",
    {
      ...agentTask,
      states: {
        ...Object.fromEntries(Object.entries(agentTask.states).filter(([name]) => name !== "CANCELLED")),
        PARKED: { description: "A dead end." },
      },
      transitions: [...agentTask.transitions, { from: "RUNNING", to: "PARKED", by: ["agent"], description: "Park" }],
      fromAnyNonTerminal: undefined,
    },
    [{ code: "no_path_to_terminal", path: "$.states.PARKED" }],
  ],
  [
    "a duplicate edge with the same actors",
    { ...agentTask, transitions: [...agentTask.transitions, agentTask.transitions[0]] },
    [{ code: "duplicate_edge", path: nextTransition }],
  ],
  [
    "a duplicate edge with other actors (the engine would never consult the second)",
    { ...agentTask, transitions: [...agentTask.transitions, { ...agentTask.transitions[0]!, by: ["user"] }] },
    [{ code: "duplicate_edge", path: nextTransition }],
  ],
  [
    "an explicit edge that a from-any edge duplicates",
    {
      ...agentTask,
      transitions: [...agentTask.transitions, { from: "RUNNING", to: "CANCELLED", by: ["user"], description: "x" }],
    },
    [{ code: "duplicate_edge", path: "$.fromAnyNonTerminal[0]" }],
  ],
  [
    "a terminal state with an outgoing edge",
    {
      ...agentTask,
      transitions: [
        ...agentTask.transitions,
        { from: "COMPLETED", to: "RUNNING", by: ["user"], description: "Reopen" },
      ],
    },
    [{ code: "terminal_has_edges", path: `${nextTransition}.from` }],
  ],
  [
    "success on a non-terminal state",
    { ...agentTask, states: { ...agentTask.states, VALIDATING: { description: "x", success: true } } },
    [{ code: "success_not_terminal", path: "$.states.VALIDATING.success" }],
  ],
  [
    "a rejection contradicting an edge",
    {
      ...agentTask,
      transitions: [
        ...agentTask.transitions,
        { from: "RUNNING", to: "COMPLETED", by: ["agent"], description: "Skip validation" },
      ],
    },
    [{ code: "rejection_contradicts_edge", path: "$.rejections[1]" }],
  ],
  [
    "no terminal state (each state's missing path is not repeated)",
    {
      ...delivery,
      states: Object.fromEntries(
        Object.entries(delivery.states).map(([k, s]) => [k, { ...s, terminal: undefined, success: undefined }]),
      ),
    },
    [{ code: "no_terminal_state", path: "$.states" }],
  ],
];

const shapeRows: Row[] = [
  ["a number", 5, [{ code: "wrong_type", path: "$" }]],
  ["null", null, [{ code: "wrong_type", path: "$" }]],
  ["a list", [agentTask], [{ code: "wrong_type", path: "$" }]],
  ["a version given as a string", { ...agentTask, version: "1" }, [{ code: "wrong_type", path: "$.version" }]],
  ["version 0", { ...agentTask, version: 0 }, [{ code: "too_small", path: "$.version" }]],
  ["a missing title", { ...agentTask, title: undefined }, [{ code: "missing_field", path: "$.title" }]],
  ["an empty description", { ...agentTask, description: " " }, [{ code: "too_small", path: "$.description" }]],
  [
    "a state field the model does not have",
    { ...agentTask, states: { ...agentTask.states, RUNNING: { description: "x", timeout: 30 } } },
    [{ code: "unknown_field", path: "$.states.RUNNING.timeout" }],
  ],
  [
    "a tool name outside the tools' alphabet",
    { ...agentTask, states: { ...agentTask.states, RUNNING: { description: "x", tools: ["Payments Refund"] } } },
    [{ code: "invalid_name", path: "$.states.RUNNING.tools[0]" }],
  ],
  [
    "a checkpoint boundary that is not a boolean",
    { ...agentTask, states: { ...agentTask.states, RUNNING: { description: "x", checkpoint: "yes" } } },
    [{ code: "wrong_type", path: "$.states.RUNNING.checkpoint" }],
  ],
  [
    "an artifact guard naming an unknown artifact",
    {
      ...delivery,
      transitions: delivery.transitions.map((t, i) =>
        i === 0 ? { ...t, guards: [{ kind: "artifact_present", artifact: "design_doc" }] } : t,
      ),
    },
    [{ code: "unknown_artifact", path: "$.transitions[0].guards[0].artifact" }],
  ],
  [
    "an artifact guard naming no artifact",
    {
      ...delivery,
      transitions: delivery.transitions.map((t, i) => (i === 0 ? { ...t, guards: [{ kind: "artifact_present" }] } : t)),
    },
    [{ code: "unknown_artifact", path: "$.transitions[0].guards[0].artifact" }],
  ],
  [
    "a budget guard with a field it does not take",
    {
      ...delivery,
      transitions: delivery.transitions.map((t, i) =>
        i === 0 ? { ...t, guards: [{ kind: "budget_within_commitment", limit: 5 }] } : t,
      ),
    },
    [{ code: "unknown_field", path: "$.transitions[0].guards[0].limit" }],
  ],
  [
    "a top-level field the model does not have",
    { ...agentTask, checkpoints: [] },
    [{ code: "unknown_field", path: "$.checkpoints" }],
  ],
  ["a workflow name with spaces", { ...agentTask, name: "Agent Task" }, [{ code: "invalid_name", path: "$.name" }]],
  [
    "the reserved workflow name (the migrations endpoint)",
    { ...agentTask, name: "migrations" },
    [{ code: "invalid_value", path: "$.name" }],
  ],
  [
    "a state name with spaces (reported once, not also as unreachable)",
    { ...agentTask, states: { ...agentTask.states, "on hold": { description: "x" } } },
    [{ code: "invalid_name", path: '$.states["on hold"]' }],
  ],
  [
    "an unknown guard kind",
    {
      ...agentTask,
      transitions: agentTask.transitions.map((t, i) => (i === 7 ? { ...t, guards: [{ kind: "all_tests_green" }] } : t)),
    },
    [{ code: "unknown_guard", path: "$.transitions[7].guards[0].kind" }],
  ],
  [
    "a guard naming an unknown gate",
    {
      ...delivery,
      transitions: delivery.transitions.map((t, i) =>
        i === 0 ? { ...t, guards: [{ kind: "gates_true", gates: ["plan_aproved"] }] } : t,
      ),
    },
    [{ code: "unknown_gate", path: "$.transitions[0].guards[0].gates[0]" }],
  ],
  [
    "a state requiring an unknown gate",
    {
      ...delivery,
      states: { ...delivery.states, implementing: { description: "x", requiresGates: ["design_approved"] } },
    },
    [{ code: "unknown_gate", path: "$.states.implementing.requiresGates[0]" }],
  ],
  [
    "a gate rule for an unknown gate",
    {
      ...deliveryWithGates,
      gates: { ...deliveryWithGates.gates, code_owner_approved: { roles: ["engineer"], description: "x" } },
    },
    [{ code: "unknown_gate", path: "$.gates.code_owner_approved" }],
  ],
  [
    "four eyes against an unknown gate",
    {
      ...deliveryWithGates,
      gates: {
        ...deliveryWithGates.gates,
        deployment_approved: { roles: ["operator"], notSetBySameAs: ["security_review"], description: "x" },
      },
    },
    [{ code: "unknown_gate", path: "$.gates.deployment_approved.notSetBySameAs[0]" }],
  ],
  [
    "a gate rule naming an unknown role",
    {
      ...deliveryWithGates,
      gates: { ...deliveryWithGates.gates, security_approved: { roles: ["engineer", "security"], description: "x" } },
    },
    [{ code: "unknown_role", path: "$.gates.security_approved.roles[1]" }],
  ],
  [
    "an edge taken by an unknown kind of actor",
    { ...agentTask, transitions: agentTask.transitions.map((t, i) => (i === 0 ? { ...t, by: ["robot"] } : t)) },
    [{ code: "unknown_actor", path: "$.transitions[0].by[0]" }],
  ],
  [
    "an edge nobody may take",
    { ...agentTask, transitions: agentTask.transitions.map((t, i) => (i === 0 ? { ...t, by: [] } : t)) },
    [{ code: "too_small", path: "$.transitions[0].by" }],
  ],
];

describe("validateWorkflowDefinition on one bad document per rule", () => {
  it.each(graphRows)("graph: %s", (_, doc, problems) => {
    expect(codesAndPaths(doc).problems).toEqual(problems);
  });

  it.each(shapeRows)("shape: %s", (_, doc, problems) => {
    expect(codesAndPaths(doc).problems).toEqual(problems);
  });

  it("says each problem in words, naming what is wrong", () => {
    const result = validateWorkflowDefinition({
      ...deliveryWithGates,
      gates: { ...deliveryWithGates.gates, security_approved: { roles: ["security"], description: "x" } },
      transitions: [...delivery.transitions, { from: "complete", to: "planning", by: ["user"], description: "Reopen" }],
    });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems.map((p) => p.message)).toEqual([
      '"security" is not a role. The roles are operator, auditor, engineer, admin, agent.',
      "complete is terminal: a task that has ended cannot move on to planning.",
    ]);
  });
});

describe("validateWorkflowDefinition with several problems", () => {
  it("lists every problem, shape and graph alike, not only the first", () => {
    const doc = {
      ...agentTask,
      version: "1",
      states: { ...agentTask.states, ORPHAN: { description: "Nothing leads here.", tool: [] } },
      transitions: [
        ...agentTask.transitions,
        { ...agentTask.transitions[0]!, by: ["robot"] },
        { from: "RUNNING", to: "COMPLETED", by: ["agent"], description: "Skip validation" },
      ],
    };
    expect(codesAndPaths(doc).problems).toEqual([
      { code: "wrong_type", path: "$.version" },
      { code: "unknown_field", path: "$.states.ORPHAN.tool" },
      { code: "unknown_actor", path: `${nextTransition}.by[0]` },
      { code: "duplicate_edge", path: nextTransition },
      { code: "rejection_contradicts_edge", path: "$.rejections[1]" },
      { code: "unreachable_state", path: "$.states.ORPHAN" },
    ]);
  });
});

describe("a workflow without a success state", () => {
  it("is valid, with a warning: nothing in the engine needs one, but such a task can never succeed", () => {
    const doc = { ...agentTask, states: { ...agentTask.states, COMPLETED: { description: "Done.", terminal: true } } };
    const result = validateWorkflowDefinition(doc);
    expect(result.ok).toBe(true);
    expect(codesAndPaths(doc).warnings).toEqual([{ code: "no_success_state", path: "$.states" }]);
  });
});

/** A delivery document using every optional field a registered workflow may use. */
const deliveryWithEverything: WorkflowDefinitionData = {
  ...deliveryWithGates,
  name: "delivery-plus",
  states: {
    ...deliveryWithGates.states,
    planning: { description: "Writing the plan.", tools: [] },
    testing: {
      description: "Tests, security review and the release.",
      requiresGates: ["plan_approved", "implementation_complete", "review_passed"],
      tools: ["deploy.release", "crm.add_note"],
      checkpoint: true,
    },
  },
  transitions: deliveryWithGates.transitions.map((t) =>
    t.from === "planning" && t.to === "implementing"
      ? {
          ...t,
          guards: [
            ...(t.guards ?? []),
            { kind: "artifact_present", artifact: "implementation_plan" },
            { kind: "budget_within_commitment" },
          ],
        }
      : t,
  ),
};

describe("validateWorkflowDefinition on the optional fields (tools, checkpoint, the declared guards)", () => {
  it("accepts them, and returns the document unchanged", () => {
    expect(validateWorkflowDefinition(deliveryWithEverything)).toEqual({
      ok: true,
      definition: deliveryWithEverything,
      warnings: [],
    });
  });

  const knownTools = ["payments.refund", "crm.add_note", "deploy.release"];

  it("accepts tools that are all known when a list of known tools is passed", () => {
    expect(validateWorkflowDefinition(deliveryWithEverything, { knownTools }).ok).toBe(true);
  });

  it("rejects each unknown tool at its path when a list of known tools is passed", () => {
    const doc = {
      ...deliveryWithEverything,
      states: {
        ...deliveryWithEverything.states,
        reviewing: { ...deliveryWithEverything.states.reviewing!, tools: ["crm.add_note", "git.force_push"] },
        testing: { ...deliveryWithEverything.states.testing!, tools: ["deploy.releese"] },
      },
    };
    const result = validateWorkflowDefinition(doc, { knownTools });
    expect(result.ok ? [] : result.problems.map(({ code, path }) => ({ code, path }))).toEqual([
      { code: "unknown_tool", path: "$.states.reviewing.tools[1]" },
      { code: "unknown_tool", path: "$.states.testing.tools[0]" },
    ]);
    expect(result.ok ? "" : result.problems[0]?.message).toBe(
      '"git.force_push" is not a registered tool. The tools are payments.refund, crm.add_note, deploy.release.',
    );
    // Without the list the model cannot know, and checks the names' form only.
    expect(validateWorkflowDefinition(doc).ok).toBe(true);
  });
});

describe("validateWorkflowDefinition on data classes", () => {
  it("accepts pointers into the task state with the four classes", () => {
    const doc = {
      ...delivery,
      data_classes: { "/artifacts/review_report": "restricted", "/subtasks/*/title": "public" },
    };
    expect(validateWorkflowDefinition(doc)).toMatchObject({ ok: true, definition: doc });
  });

  it("names an unknown class and a malformed pointer at their keys", () => {
    const doc = { ...delivery, data_classes: { "/artifacts": "secret", gates: "public" } };
    expect(codesAndPaths(doc).problems).toEqual([
      { code: "unknown_data_class", path: '$.data_classes["/artifacts"]' },
      { code: "invalid_pointer", path: '$.data_classes["gates"]' },
    ]);
  });
});
