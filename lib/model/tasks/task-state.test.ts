import { describe, expect, it } from "vitest";
import {
  applyPatch,
  isEmptyPatch,
  TaskPatchSchema,
  TaskStateSchema,
  type TaskPatch,
} from "@/lib/model/tasks/task-state";
import { agentTaskV1 } from "@/lib/model/workflows/agent-task";
import { makeState } from "@/tests/helpers/task-states";

const def = agentTaskV1;

describe("TaskPatchSchema: the schema is fixed", () => {
  const unknownKeys: Array<[string, unknown]> = [
    ["top level", { status: "COMPLETED" }],
    ["top level (version)", { version: 99 }],
    ["gates", { gates: { plan_approved: true, ceo_approved: true } }],
    ["artifacts", { artifacts: { secrets: "x" } }],
    ["budget", { budget: { hops_used: 1, hops_remaining: 5 } }],
    ["subtask", { subtasks: [{ id: "a", owner: "me" }] }],
  ];
  it.each(unknownKeys)("rejects an unknown key in %s", (_where, patch) => {
    const parsed = TaskPatchSchema.safeParse(patch);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.code)).toContain("unrecognized_keys");
  });

  const badValues: Array<[string, unknown]> = [
    ["a gate that is not a boolean", { gates: { plan_approved: "yes" } }],
    ["a negative budget", { budget: { tokens_spent: -1 } }],
    ["a fractional hop count", { budget: { hops_used: 1.5 } }],
    ["an infinite amount", { budget: { currency_spent_usd: Number.POSITIVE_INFINITY } }],
    ["an unknown subtask status", { subtasks: [{ id: "a", status: "DONE" }] }],
    ["a subtask id with spaces", { subtasks: [{ id: "a b" }] }],
    ["an agent identity with spaces", { active_agents: ["agent one"] }],
  ];
  it.each(badValues)("rejects %s", (_what, patch) => {
    expect(TaskPatchSchema.safeParse(patch).success).toBe(false);
  });

  it("accepts every member it documents", () => {
    const patch = {
      gates: { plan_approved: true },
      artifacts: { implementation_plan: "plan", code_files: ["a.ts"], test_results: "ok", review_report: "lgtm" },
      active_agents: ["spiffe://verity/agent/a"],
      completed_agents: [],
      failed_agents: [],
      budget: { currency_committed_usd: 5, currency_spent_usd: 1, tokens_spent: 10, hops_used: 1 },
      subtasks: [{ id: "a", title: "A", mandatory: true, status: "ACTIVE" }],
    };
    expect(TaskPatchSchema.parse(patch)).toEqual(patch);
  });

  it("TaskStateSchema refuses a stored document with an invented key", () => {
    const state = makeState(def, "RUNNING");
    expect(TaskStateSchema.safeParse(state).success).toBe(true);
    expect(TaskStateSchema.safeParse({ ...state, mood: "optimistic" }).success).toBe(false);
    expect(TaskStateSchema.safeParse({ ...state, budget: { ...state.budget, extra: 1 } }).success).toBe(false);
    expect(TaskStateSchema.safeParse({ ...state, schema_version: "oaies.task-state.v1" }).success).toBe(false);
  });
});

describe("applyPatch", () => {
  const base = makeState(def, "RUNNING", {
    gates: { ...makeState(def, "RUNNING").gates, plan_approved: true },
    artifacts: { implementation_plan: "v1", code_files: ["a.ts"] },
    active_agents: ["spiffe://a"],
    subtasks: [
      { id: "s1", title: "First", mandatory: true, status: "ACTIVE" },
      { id: "s2", title: "Second", mandatory: false, status: "PENDING" },
    ],
  });

  it("merges gates, artifacts and budget member by member", () => {
    const next = applyPatch(base, {
      gates: { review_passed: true },
      artifacts: { test_results: "green" },
      budget: { hops_used: 9 },
    });
    expect(next.gates).toEqual({ ...base.gates, review_passed: true });
    expect(next.gates.plan_approved).toBe(true);
    expect(next.artifacts).toEqual({ implementation_plan: "v1", code_files: ["a.ts"], test_results: "green" });
    expect(next.budget).toEqual({ ...base.budget, hops_used: 9 });
  });

  it("ignores members given as undefined instead of erasing them", () => {
    const next = applyPatch(base, {
      gates: { plan_approved: undefined },
      budget: { hops_used: undefined },
      artifacts: { implementation_plan: undefined },
    });
    expect(next).toEqual(base);
  });

  it("replaces agent lists whole", () => {
    const next = applyPatch(base, { active_agents: [], completed_agents: ["spiffe://a"] });
    expect(next.active_agents).toEqual([]);
    expect(next.completed_agents).toEqual(["spiffe://a"]);
    expect(next.failed_agents).toEqual(base.failed_agents);
  });

  it("merges subtasks by id: updates keep other members, new ids are appended with defaults, none is removed", () => {
    const next = applyPatch(base, {
      subtasks: [
        { id: "s2", status: "COMPLETED" },
        { id: "s3" },
        { id: "s4", title: "Fourth", mandatory: true, status: "ACTIVE" },
      ],
    });
    expect(next.subtasks).toEqual([
      { id: "s1", title: "First", mandatory: true, status: "ACTIVE" },
      { id: "s2", title: "Second", mandatory: false, status: "COMPLETED" },
      { id: "s3", title: "s3", mandatory: false, status: "PENDING" },
      { id: "s4", title: "Fourth", mandatory: true, status: "ACTIVE" },
    ]);
    // An empty subtask list is a no-op, not a removal.
    expect(applyPatch(base, { subtasks: [] }).subtasks).toEqual(base.subtasks);
  });

  it("never mutates the state it is given", () => {
    const snapshot = structuredClone(base);
    applyPatch(base, {
      gates: { tests_passing: true },
      subtasks: [{ id: "s1", status: "COMPLETED" }, { id: "new" }],
      budget: { tokens_spent: 1e6 },
    });
    expect(base).toEqual(snapshot);
  });

  it("keeps status, version and identity fields: those are the engine's, not the patch's", () => {
    const next = applyPatch(base, { gates: { tests_passing: true } });
    for (const key of [
      "status",
      "version",
      "task_id",
      "workflow_digest",
      "intent_id",
      "updated_at",
      "updated_by",
      "schema_version",
    ] as const) {
      expect(next[key]).toBe(base[key]);
    }
  });
});

describe("isEmptyPatch", () => {
  it.each<[TaskPatch, boolean]>([
    [{}, true],
    [{ gates: undefined }, true],
    [{ gates: {} }, false],
    [{ subtasks: [] }, false],
    [{ budget: { hops_used: 1 } }, false],
  ])("%j → %s", (patch, empty) => {
    expect(isEmptyPatch(patch)).toBe(empty);
  });
});
