import { describe, expect, it } from "vitest";
import { decideParent, graphThreadTaskId, ListGraphCheckpointsQuerySchema } from "@/lib/model/graph/graph-checkpoint";
import { clientIdSchema } from "@/lib/core/validation";

describe("decideParent", () => {
  it("lets a put without a parent start a history", () => {
    expect(decideParent(null, undefined, false)).toEqual({ kind: "first" });
    expect(decideParent("c1", undefined, false)).toEqual({ kind: "first" });
  });

  it("continues the thread from its head, or from anything when it has none", () => {
    expect(decideParent("c2", "c2", false)).toEqual({ kind: "continues" });
    expect(decideParent(null, "c0", false)).toEqual({ kind: "continues" });
  });

  it("refuses a put from a checkpoint that is no longer the head, naming both", () => {
    const decision = decideParent("c3", "c2", false);
    expect(decision.kind).toBe("refused");
    expect(decision.kind === "refused" && decision.message).toMatch(/continues from c2.*latest checkpoint is c3/);
  });

  it("records a replay the caller chose as a fork of the older checkpoint", () => {
    expect(decideParent("c3", "c1", true)).toEqual({ kind: "fork", forkedFrom: "c1" });
    // A replay from the head itself is no fork.
    expect(decideParent("c3", "c3", true)).toEqual({ kind: "continues" });
  });
});

describe("graphThreadTaskId", () => {
  it("is a valid task id for any thread id, the same for the same thread, apart by namespace", () => {
    const weird = "thread with spaces / and ünïcode \u0000";
    const id = graphThreadTaskId("ns", weird);
    expect(clientIdSchema.safeParse(id).success).toBe(true);
    expect(graphThreadTaskId("ns", weird)).toBe(id);
    expect(graphThreadTaskId("other", weird)).not.toBe(id);
    // The separator keeps ("a", "bc") and ("ab", "c") apart.
    expect(graphThreadTaskId("a", "bc")).not.toBe(graphThreadTaskId("ab", "c"));
  });
});

describe("the list query", () => {
  it("takes a metadata filter as a JSON object, and words anything else", () => {
    expect(ListGraphCheckpointsQuerySchema.parse({ filter: '{"source":"loop"}' }).filter).toEqual({ source: "loop" });
    const bad = ListGraphCheckpointsQuerySchema.safeParse({ filter: "[1]" });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["filter"]);
  });
});
