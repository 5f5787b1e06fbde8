import { describe, expect, it } from "vitest";
import { automaticCheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-boundaries";
import { defineWorkflow } from "@/lib/model/workflows/workflow-definition";
import { deliveryV1 } from "@/lib/model/workflows/delivery";
import { gatesTrue, makeState } from "@/tests/helpers/task-states";

describe("a state a workflow declares a checkpoint boundary", () => {
  const def = defineWorkflow({
    ...deliveryV1,
    name: "delivery-checkpointed",
    states: { ...deliveryV1.states, reviewing: { ...deliveryV1.states.reviewing!, checkpoint: true } },
  });
  const implementing = makeState(def, "implementing", {
    gates: gatesTrue(["plan_approved", "implementation_complete"]),
  });

  it("takes a checkpoint on entering it", () => {
    expect(automaticCheckpointTrigger(def, implementing, { ...implementing, status: "reviewing" })).toBe(
      "state_boundary",
    );
  });

  it("takes none for an update in place while in it, nor on leaving it for an undeclared state", () => {
    const reviewing = { ...implementing, status: "reviewing" };
    expect(
      automaticCheckpointTrigger(def, reviewing, { ...reviewing, budget: { ...reviewing.budget, hops_used: 9 } }),
    ).toBeNull();
    expect(automaticCheckpointTrigger(def, reviewing, { ...reviewing, status: "implementing" })).toBeNull();
  });

  it("ranks below a terminal state and above a gate opening in the same transition", () => {
    const withBoundaryAtEnd = defineWorkflow({
      ...def,
      states: { ...def.states, cancelled: { ...def.states.cancelled!, checkpoint: true } },
    });
    expect(automaticCheckpointTrigger(withBoundaryAtEnd, implementing, { ...implementing, status: "cancelled" })).toBe(
      "cancelled",
    );
    const opening = {
      ...implementing,
      status: "reviewing",
      gates: gatesTrue(["plan_approved", "implementation_complete", "review_passed"]),
    };
    expect(automaticCheckpointTrigger(def, implementing, opening)).toBe("state_boundary");
  });

  it("leaves the built-in definitions' boundaries as they were: none on entering reviewing", () => {
    const shipped = makeState(deliveryV1, "implementing", {
      gates: gatesTrue(["plan_approved", "implementation_complete"]),
    });
    expect(automaticCheckpointTrigger(deliveryV1, shipped, { ...shipped, status: "reviewing" })).toBeNull();
  });
});
