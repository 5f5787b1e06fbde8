import { describe, expect, it } from "vitest";
import { changeOfIntent, changesOf, intentIdOfChange } from "@/programs/agent/delivery/delivery-agent";
import { planDeliveryStep, RELEASE_CALL, type Change } from "@/programs/agent/delivery/plan";
import type { Execution, Task } from "@/sdk";

const change: Change = {
  id: "run-1",
  service: "checkout",
  version: "1.1.0",
  commit: "9f1c2ab",
  environment: "production",
  summary: "ship checkout 1.1.0",
};

const noGates = {
  plan_approved: false,
  implementation_complete: false,
  review_passed: false,
  tests_passing: false,
  security_approved: false,
  deployment_approved: false,
};

function task(status: string, gates: Partial<typeof noGates> = {}, artifacts: Record<string, unknown> = {}): Task {
  return {
    id: "delivery-run-1",
    status,
    version: 4,
    state: { status, gates: { ...noGates, ...gates }, artifacts },
  } as unknown as Task;
}

const release = (status: string): Execution =>
  ({ id: "exec_r", tool_call_id: RELEASE_CALL, status, attempt: 1, attempt_id: "exec_r.1" }) as Execution;

describe("the coding agent's plan", () => {
  it("writes the plan, then waits for a person to approve it rather than approving it itself", () => {
    expect(planDeliveryStep(task("planning"), [], change)).toMatchObject({
      kind: "transition",
      patch: { artifacts: { implementation_plan: expect.stringContaining("checkout 1.1.0") } },
    });
    const written = task("planning", {}, { implementation_plan: "the plan" });
    const step = planDeliveryStep(written, [], change);
    expect(step).toMatchObject({ kind: "stop", outcome: "waiting_for_people" });
    expect(JSON.stringify(step)).not.toContain("plan_approved");
    expect(
      planDeliveryStep(task("planning", { plan_approved: true }, { implementation_plan: "p" }), [], change),
    ).toEqual({ kind: "transition", to: "implementing", reason: "Plan approved: implementing" });
  });

  it("sets its own gates with their artifacts, stage by stage", () => {
    expect(planDeliveryStep(task("implementing"), [], change)).toMatchObject({
      to: "reviewing",
      patch: { gates: { implementation_complete: true }, artifacts: { code_files: [expect.any(String)] } },
    });
    expect(planDeliveryStep(task("reviewing"), [], change)).toMatchObject({
      to: "testing",
      patch: { gates: { review_passed: true } },
    });
    expect(planDeliveryStep(task("testing"), [], change)).toMatchObject({
      kind: "transition",
      patch: { gates: { tests_passing: true } },
    });
  });

  it("never releases before security and deployment are approved by people", () => {
    const tested = { tests_passing: true };
    const results = { test_results: "ok" };
    expect(planDeliveryStep(task("testing", tested, results), [], change)).toMatchObject({
      kind: "stop",
      outcome: "waiting_for_people",
      detail: expect.stringContaining("security approval and an operator's deployment approval"),
    });
    expect(
      planDeliveryStep(task("testing", { ...tested, security_approved: true }, results), [], change),
    ).toMatchObject({ kind: "stop", detail: expect.not.stringContaining("security") });
    expect(
      planDeliveryStep(
        task("testing", { ...tested, security_approved: true, deployment_approved: true }, results),
        [],
        change,
      ),
    ).toMatchObject({ kind: "transition", to: "releasing" });
  });

  it("releases once: a recorded success completes, a SENT release found on resume is reported unknown, an unknown one waits", () => {
    const releasing = task("releasing");
    expect(planDeliveryStep(releasing, [], change)).toEqual({ kind: "release" });
    expect(planDeliveryStep(releasing, [release("INTENT_RECORDED")], change)).toEqual({ kind: "release" });
    expect(planDeliveryStep(releasing, [release("SENT")], change)).toMatchObject({ kind: "record_unknown" });
    expect(planDeliveryStep(releasing, [release("OUTCOME_UNKNOWN")], change)).toMatchObject({
      kind: "stop",
      outcome: "reconciling",
    });
    expect(planDeliveryStep(releasing, [release("RECONCILED_SUCCEEDED")], change)).toMatchObject({
      kind: "transition",
      to: "complete",
    });
    expect(planDeliveryStep(releasing, [release("RECONCILED_FAILED")], change)).toMatchObject({
      kind: "stop",
      outcome: "failed",
    });
  });

  it("sends the rollback a person recorded, under its own call, and ends rolled back once it is known to have happened", () => {
    const releasing = task("releasing");
    const rollback = (status: string): Execution =>
      ({
        id: "exec_b",
        tool_call_id: "compensate.release",
        tool: "deploy.rollback",
        status,
        compensates_execution_id: "exec_r",
      }) as Execution;
    const released = release("RECONCILED_SUCCEEDED");
    expect(planDeliveryStep(releasing, [released, rollback("INTENT_RECORDED")], change)).toEqual({
      kind: "rollback",
      execution: rollback("INTENT_RECORDED"),
    });
    expect(planDeliveryStep(releasing, [released, rollback("SENT")], change)).toMatchObject({
      kind: "record_unknown",
      execution: { id: "exec_b" },
    });
    expect(planDeliveryStep(releasing, [released, rollback("NEEDS_HUMAN")], change)).toMatchObject({
      kind: "stop",
      outcome: "reconciling",
    });
    expect(planDeliveryStep(releasing, [released, rollback("SUCCEEDED")], change)).toMatchObject({
      kind: "transition",
      to: "rolled_back",
    });
    // A compensation of something else is not this release's.
    expect(
      planDeliveryStep(releasing, [released, { ...rollback("SUCCEEDED"), compensates_execution_id: "exec_x" }], change),
    ).toMatchObject({ kind: "transition", to: "complete" });
  });

  it("keeps the change in the intent id, so a resumed agent releases the same thing", () => {
    for (const c of changesOf("demo", 4))
      expect(changeOfIntent(intentIdOfChange(c))).toMatchObject({ ...c, summary: expect.any(String) });
    expect(changeOfIntent("refund:o1:100:usd")).toBeUndefined();
    expect(changesOf("demo", 2)).toEqual(changesOf("demo", 2));
  });
});
