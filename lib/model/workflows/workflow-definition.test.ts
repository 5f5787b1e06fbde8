import { describe, expect, it } from "vitest";
import {
  defineWorkflow,
  edgesFrom,
  isTerminal,
  toolsAllowedIn,
  type WorkflowDefinition,
  type WorkflowDefinitionData,
} from "@/lib/model/workflows/workflow-definition";
import {
  gateRulesOf,
  getLatestKnownWorkflow,
  getWorkflowByDigest,
  rememberWorkflowDefinition,
  workflowDefinitions,
} from "@/lib/model/workflows";
import { agentTaskV1 } from "@/lib/model/workflows/agent-task";
import { deliveryV1 } from "@/lib/model/workflows/delivery";

const tiny: WorkflowDefinitionData = {
  name: "tiny",
  version: 1,
  title: "Tiny",
  description: "Two steps.",
  initial: "a",
  states: {
    a: { description: "A" },
    b: { description: "B" },
    done: { description: "Done", terminal: true, success: true },
    gone: { description: "Gone", terminal: true },
  },
  transitions: [
    { from: "a", to: "b", by: ["agent"], description: "go" },
    { from: "b", to: "done", by: ["agent"], description: "finish" },
  ],
  fromAnyNonTerminal: [{ to: "gone", by: ["user"], description: "drop" }],
  rejections: [],
};

function reachable(def: WorkflowDefinition, from: string): Set<string> {
  const seen = new Set([from]);
  const queue = [from];
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
    for (const e of edgesFrom(def, s)) if (!seen.has(e.to)) (seen.add(e.to), queue.push(e.to));
  }
  return seen;
}

describe("defineWorkflow", () => {
  it("expands fromAnyNonTerminal into one edge per non-terminal state, none out of a terminal one", () => {
    const def = defineWorkflow(tiny);
    expect(def.edges.map((e) => `${e.from}>${e.to}`)).toEqual(["a>b", "b>done", "a>gone", "b>gone"]);
    expect(def.edges.filter((e) => e.to === "gone").every((e) => e.by.join() === "user")).toBe(true);
  });

  it("refuses a dangling state name in an edge, a rejection or the initial state", () => {
    expect(() =>
      defineWorkflow({
        ...tiny,
        transitions: [...tiny.transitions, { from: "a", to: "c", by: ["agent"], description: "?" }],
      }),
    ).toThrow(/unknown state/);
    expect(() =>
      defineWorkflow({ ...tiny, rejections: [{ from: "zz", to: "done", invariant: "x", message: "x" }] }),
    ).toThrow(/unknown state/);
    expect(() => defineWorkflow({ ...tiny, initial: "start" })).toThrow(/unknown initial/);
  });

  it("pins a digest of the definition data: equal data, equal digest; any change, a new digest", () => {
    const def = defineWorkflow(tiny);
    expect(def.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(defineWorkflow(structuredClone(tiny)).digest).toBe(def.digest);
    // Key order is not part of the definition.
    const reordered = Object.fromEntries(Object.entries(tiny).reverse()) as unknown as WorkflowDefinitionData;
    expect(defineWorkflow(reordered).digest).toBe(def.digest);
    const changes: WorkflowDefinitionData[] = [
      { ...tiny, version: 2 },
      { ...tiny, description: "Two steps!" },
      { ...tiny, states: { ...tiny.states, b: { description: "B", requiresGates: ["plan_approved"] } } },
      { ...tiny, transitions: [{ ...tiny.transitions[0]!, by: ["agent", "user"] }, tiny.transitions[1]!] },
      {
        ...tiny,
        transitions: [
          tiny.transitions[0]!,
          { ...tiny.transitions[1]!, guards: [{ kind: "mandatory_subtasks_completed" }] },
        ],
      },
      { ...tiny, fromAnyNonTerminal: [] },
    ];
    const digests = changes.map((c) => defineWorkflow(c).digest);
    expect(new Set([def.digest, ...digests]).size).toBe(changes.length + 1);
  });
});

describe("toolsAllowedIn", () => {
  const withTools = defineWorkflow({
    ...tiny,
    states: { ...tiny.states, a: { description: "A", tools: ["crm.add_note"] }, b: { description: "B", tools: [] } },
  });

  it("is the state's list, an empty list meaning no tool", () => {
    expect(toolsAllowedIn(withTools, "a")).toEqual(["crm.add_note"]);
    expect(toolsAllowedIn(withTools, "b")).toEqual([]);
  });

  it("is any where the state says nothing (every shipped definition), and nothing for an unknown state", () => {
    expect(toolsAllowedIn(withTools, "done")).toBe("any");
    expect(toolsAllowedIn(agentTaskV1, "RUNNING")).toBe("any");
    expect(toolsAllowedIn(withTools, "nowhere")).toEqual([]);
  });
});

describe.each(workflowDefinitions.map((d) => [`${d.name} v${d.version}`, d] as const))(
  "shipped definition %s",
  (_label, def) => {
    const states = Object.keys(def.states);

    it("has no two edges between the same pair of states (the first would silently win)", () => {
      const pairs = def.edges.map((e) => `${e.from}>${e.to}`);
      expect(new Set(pairs).size).toBe(pairs.length);
    });

    it("names no rejection that is also an edge", () => {
      for (const r of def.rejections) expect(def.edges.some((e) => e.from === r.from && e.to === r.to)).toBe(false);
    });

    it("reaches every state from the initial one, and a terminal state from every state", () => {
      expect([...reachable(def, def.initial)].sort()).toEqual([...states].sort());
      for (const s of states) expect([...reachable(def, s)].some((t) => isTerminal(def, t))).toBe(true);
    });

    it("has no edge out of a terminal state and at least one success state", () => {
      for (const s of states.filter((t) => isTerminal(def, t))) expect(edgesFrom(def, s)).toEqual([]);
      expect(states.some((s) => def.states[s]?.success && def.states[s]?.terminal)).toBe(true);
    });

    it("is found by its digest and is the latest of its name", () => {
      expect(getWorkflowByDigest(def.digest)).toBe(def);
      expect(getLatestKnownWorkflow(def.name)?.version).toBeGreaterThanOrEqual(def.version);
    });
  },
);

describe("shipped digests", () => {
  it("differ between definitions", () => {
    expect(new Set(workflowDefinitions.map((d) => d.digest)).size).toBe(workflowDefinitions.length);
  });

  /**
   * Tasks in the field are pinned to these digests; a task whose digest the
   * server no longer knows cannot move. Editing a shipped definition in
   * place strands them: ship a new version next to it instead (and add its
   * digest here).
   */
  it("of version 1 never change", () => {
    expect({ agentTask: agentTaskV1.digest, delivery: deliveryV1.digest }).toEqual({
      agentTask: AGENT_TASK_V1_DIGEST,
      delivery: DELIVERY_V1_DIGEST,
    });
  });

  // The registry's optional fields (tools, checkpoint, the declared guards) are left out of every
  // shipped definition, so adding them to the format changed none of the four digests.
  it("of every shipped version are the ones tasks in the field are pinned to", () => {
    expect(Object.fromEntries(workflowDefinitions.map((d) => [`${d.name} v${d.version}`, d.digest]))).toEqual({
      "agent-task v1": AGENT_TASK_V1_DIGEST,
      "agent-task v2": "sha256:880baa9d8ca4750bb0c98b3ddf4af21984a3c5202afa91d896a12fc78dca33a4",
      "delivery v1": DELIVERY_V1_DIGEST,
      "delivery v2": "sha256:1aa1fb55a5173fa5fe7154b3bbb393e72ee1a49cf098c549e9be9c0fdf365711",
    });
  });

  it("an unknown digest finds nothing", () => {
    expect(getWorkflowByDigest("sha256:0000")).toBeUndefined();
    expect(getLatestKnownWorkflow("no-such-workflow")).toBeUndefined();
  });
});

describe("the cache of definitions by digest", () => {
  it("remembers a published definition under its digest, once", () => {
    const def = defineWorkflow({ ...tiny, name: "tiny-cached" });
    expect(getWorkflowByDigest(def.digest)).toBeUndefined();
    const { digest: _d, edges: _e, ...data } = def;
    const remembered = rememberWorkflowDefinition(data, def.digest);
    expect(remembered.digest).toBe(def.digest);
    expect(getWorkflowByDigest(def.digest)).toBe(remembered);
    expect(rememberWorkflowDefinition(structuredClone(data), def.digest)).toBe(remembered);
  });

  it("refuses content stored under a digest it does not have: rules nobody published", () => {
    const def = defineWorkflow({ ...tiny, name: "tiny-tampered" });
    const { digest: _d, edges: _e, ...data } = def;
    expect(() => rememberWorkflowDefinition({ ...data, title: "Edited in the table" }, def.digest)).toThrow(
      /digests to/,
    );
    expect(getWorkflowByDigest(def.digest)).toBeUndefined();
  });
});

describe("gateRulesOf", () => {
  it("gives a shipped version without rules the newest shipped version's, a published one only its own", () => {
    expect(Object.keys(gateRulesOf(deliveryV1)).sort()).toEqual(["deployment_approved", "security_approved"]);
    const published = defineWorkflow({ ...deliveryV1, version: 7, title: "Delivery without human gates" });
    expect(gateRulesOf(published)).toEqual({});
  });
});

const AGENT_TASK_V1_DIGEST = "sha256:a51fd6dc64b3376709bb0e69cdffbc20187bfc00562311899ae648b99193ed43";
const DELIVERY_V1_DIGEST = "sha256:ca4b73cd3afd8ca334e861395b0018d22ae8ff248a68e8fb5a31928a47e35d53";
