import { describe, expect, it } from "vitest";
import { planNextStep, refundSubtasks, refundSubtasksOf, type AgentStep } from "@/programs/agent/plan";
import type { Execution, Task } from "@/sdk";

const me = "spiffe://verity.local/agent/refund-bot";

function task(status: string, done: string[] = []): Task {
  return {
    id: "refund-o1",
    status,
    version: 7,
    state: {
      status,
      subtasks: refundSubtasks.map((s) => ({ ...s, status: done.includes(s.id) ? "COMPLETED" : "PENDING" })),
    },
  } as unknown as Task;
}

function exec(toolCallId: string, status: string, extra: Partial<Execution> = {}): Execution {
  return {
    id: `exec_${toolCallId}`,
    tool_call_id: toolCallId,
    status,
    attempt: 1,
    attempt_id: `exec_${toolCallId}.1`,
    result: null,
    error: null,
    retry: null,
    ...extra,
  } as Execution;
}

const plan = (t: Task, executions: Execution[] = []): AgentStep => planNextStep(t, executions, me);

/** The server's retry advice on a settled failure, as the execution resource carries it. */
function advice(safe: boolean, code: NonNullable<Execution["retry"]>["code"], attempt = 1): Execution["retry"] {
  return { safe, code, reason: `advice: ${code}`, attempt, max_attempts: 2 };
}

describe("the refund agent's plan", () => {
  it("walks the happy path one committed step at a time", () => {
    expect(plan(task("RECEIVED"))).toMatchObject({ kind: "transition", to: "PLANNING" });
    expect(plan(task("PLANNING"))).toMatchObject({ kind: "transition", to: "READY" });
    expect(plan(task("READY"))).toMatchObject({ kind: "transition", to: "RUNNING", patch: { active_agents: [me] } });
    expect(plan(task("RUNNING"))).toEqual({
      kind: "transition",
      patch: { subtasks: [{ id: "lookup-order", status: "COMPLETED" }] },
      reason: "order looked up",
    });
    expect(plan(task("RUNNING", ["lookup-order"]))).toEqual({
      kind: "tool",
      toolCallId: "refund",
      nextStatus: "RUNNING",
    });
    const refunded = [exec("refund", "SUCCEEDED")];
    const recordRefund = plan(task("RUNNING", ["lookup-order"]), refunded);
    expect(recordRefund).toMatchObject({
      kind: "transition",
      patch: { subtasks: [{ id: "issue-refund", status: "COMPLETED" }] },
    });
    expect(recordRefund).not.toHaveProperty("to");
    expect(plan(task("RUNNING", ["lookup-order", "issue-refund"]), refunded)).toEqual({
      kind: "tool",
      toolCallId: "notify-customer",
      nextStatus: "VALIDATING",
    });
    const all = [...refunded, exec("notify-customer", "SUCCEEDED")];
    expect(plan(task("VALIDATING", ["lookup-order", "issue-refund"]), all)).toMatchObject({
      kind: "transition",
      to: "COMPLETED",
      patch: { subtasks: [{ id: "notify-customer", status: "COMPLETED" }], active_agents: [], completed_agents: [me] },
    });
    expect(plan(task("COMPLETED"), all)).toMatchObject({ kind: "stop", outcome: "completed" });
  });

  it("completes the lookup subtask before completing a task that reached VALIDATING without it (a takeover from an older checkpoint)", () => {
    const all = [exec("refund", "SUCCEEDED"), exec("notify-customer", "SUCCEEDED")];
    expect(plan(task("VALIDATING", ["issue-refund"]), all)).toEqual({
      kind: "transition",
      patch: { subtasks: [{ id: "lookup-order", status: "COMPLETED" }] },
      reason: "order looked up",
    });
    expect(plan(task("VALIDATING", ["lookup-order", "issue-refund"]), all)).toMatchObject({ to: "COMPLETED" });
  });

  it("never plans a call whose receipt exists", () => {
    const steps = [
      task("RUNNING", ["lookup-order", "issue-refund"]),
      task("VALIDATING", ["lookup-order", "issue-refund"]),
    ].map((t) => plan(t, [exec("refund", "RECONCILED_SUCCEEDED"), exec("notify-customer", "SUCCEEDED")]));
    for (const s of steps) expect(s).not.toMatchObject({ kind: "tool", toolCallId: "refund" });
  });

  it("leaves an unknown outcome to the server and never retries it", () => {
    for (const status of ["SENT", "OUTCOME_UNKNOWN", "NEEDS_HUMAN"]) {
      expect(plan(task("RUNNING", ["lookup-order"]), [exec("refund", status)])).toMatchObject({
        kind: "stop",
        outcome: "reconciling",
      });
    }
    expect(plan(task("RECONCILING", ["lookup-order"]), [exec("refund", "OUTCOME_UNKNOWN")])).toMatchObject({
      kind: "stop",
      outcome: "reconciling",
    });
    expect(plan(task("WAITING_FOR_HUMAN"), [exec("refund", "NEEDS_HUMAN")])).toMatchObject({
      kind: "stop",
      outcome: "review",
    });
  });

  it("retries a known failure under the same key exactly when the server's advice says it is safe", () => {
    const running = task("RUNNING", ["lookup-order"]);
    for (const code of ["retryable_failure", "never_sent", "never_applied"] as const) {
      for (const status of ["FAILED", "RECONCILED_FAILED"]) {
        expect(plan(running, [exec("refund", status, { retry: advice(true, code) })]), `${status} ${code}`).toEqual({
          kind: "tool",
          toolCallId: "refund",
          nextStatus: "RUNNING",
        });
      }
    }
  });

  it("never drops a refund that was not made: past the attempt limit, or with nobody saying a retry is safe, a person decides", () => {
    const running = task("RUNNING", ["lookup-order"]);
    for (const retry of [advice(false, "attempt_limit", 2), advice(false, "not_stated"), null]) {
      const step = plan(running, [
        exec("refund", "RECONCILED_FAILED", { attempt: 2, retry, error: "not found at the provider" }),
      ]);
      expect(step).toMatchObject({ kind: "transition", to: "WAITING_FOR_HUMAN" });
      expect(step).not.toHaveProperty("patch");
      if (step.kind === "transition")
        expect(step.reason).toContain(
          retry?.reason ?? "RECONCILED_FAILED (not found at the provider) without retry advice",
        );
    }
  });

  it("fails the task only on the provider's own refusal, with its reason", () => {
    const step = plan(task("RUNNING", ["lookup-order"]), [
      exec("refund", "FAILED", { retry: advice(false, "refused"), error: "invalid_request: amount too large" }),
    ]);
    expect(step).toEqual({
      kind: "transition",
      to: "FAILED",
      patch: { subtasks: [{ id: "issue-refund", status: "FAILED" }] },
      reason: "refund refused by the provider: invalid_request: amount too large",
    });
  });

  it("retries the customer note while that is safe, and otherwise hands the task to a person", () => {
    const refunded = task("RUNNING", ["lookup-order", "issue-refund"]);
    expect(
      plan(refunded, [
        exec("refund", "SUCCEEDED"),
        exec("notify-customer", "RECONCILED_FAILED", { retry: advice(true, "never_applied") }),
      ]),
    ).toEqual({
      kind: "tool",
      toolCallId: "notify-customer",
      nextStatus: "VALIDATING",
    });
    expect(
      plan(refunded, [
        exec("refund", "SUCCEEDED"),
        exec("notify-customer", "FAILED", { attempt: 2, retry: advice(false, "attempt_limit", 2) }),
      ]),
    ).toMatchObject({
      kind: "transition",
      to: "WAITING_FOR_HUMAN",
    });
  });

  it("on resume, sends an intent that never left, and marks one that did as unknown", () => {
    const waiting = task("WAITING_FOR_TOOL", ["lookup-order"]);
    expect(plan(waiting, [exec("refund", "INTENT_RECORDED")])).toEqual({
      kind: "tool",
      toolCallId: "refund",
      nextStatus: "RUNNING",
    });
    const sent = exec("refund", "SENT");
    expect(plan(waiting, [sent])).toEqual({ kind: "record_unknown", execution: sent });
    const note = exec("notify-customer", "INTENT_RECORDED");
    expect(plan(waiting, [exec("refund", "SUCCEEDED"), note])).toEqual({
      kind: "tool",
      toolCallId: "notify-customer",
      nextStatus: "VALIDATING",
    });
  });

  it("takes over a task whose outcome a fenced-out worker recorded: moves it on from the receipt, never calls again", () => {
    const waiting = task("WAITING_FOR_TOOL", ["lookup-order"]);
    expect(plan(waiting, [exec("refund", "SUCCEEDED")])).toMatchObject({ kind: "transition", to: "RUNNING" });
    expect(plan(waiting, [exec("refund", "FAILED", { retry: advice(true, "retryable_failure") })])).toMatchObject({
      kind: "transition",
      to: "RUNNING",
    });
    expect(plan(waiting, [exec("refund", "SUCCEEDED"), exec("notify-customer", "SUCCEEDED")])).toMatchObject({
      kind: "transition",
      to: "VALIDATING",
    });
    expect(plan(waiting, [exec("refund", "OUTCOME_UNKNOWN")])).toMatchObject({ kind: "stop", outcome: "reconciling" });
    expect(plan(waiting, [exec("refund", "CANCELLED")])).toMatchObject({ kind: "stop", outcome: "in_flight" });
  });

  it("after reconciliation confirms the refund straight into VALIDATING, records it and still notifies the customer", () => {
    const refunded = [exec("refund", "RECONCILED_SUCCEEDED")];
    expect(plan(task("VALIDATING", ["lookup-order"]), refunded)).toMatchObject({
      patch: { subtasks: [{ id: "issue-refund", status: "COMPLETED" }] },
    });
    expect(plan(task("VALIDATING", ["lookup-order", "issue-refund"]), refunded)).toMatchObject({
      kind: "transition",
      to: "RUNNING",
    });
    expect(plan(task("VALIDATING", ["lookup-order"]), [exec("refund", "RECONCILED_FAILED")])).toMatchObject({
      kind: "transition",
      to: "RUNNING",
    });
  });

  it("completes without the optional note when it failed, and escalates a task stuck in RUNNING by it", () => {
    const refunded = exec("refund", "SUCCEEDED");
    const noteFailed = exec("notify-customer", "FAILED", { retry: advice(false, "refused"), error: "invalid_request" });
    expect(plan(task("RUNNING", ["lookup-order", "issue-refund"]), [refunded, noteFailed])).toMatchObject({
      kind: "transition",
      to: "WAITING_FOR_HUMAN",
    });
    const completed = plan(task("VALIDATING", ["lookup-order", "issue-refund"]), [refunded, noteFailed]);
    expect(completed).toMatchObject({ kind: "transition", to: "COMPLETED" });
    expect(completed).not.toHaveProperty("patch.subtasks");
  });
});

describe("the refund agent's instructions", () => {
  it("relies on the task's current refund instruction for the refund, and only for the refund", () => {
    const running = task("RUNNING", ["lookup-order"]);
    expect(planNextStep(running, [], me, { id: "ins-1" })).toEqual({
      kind: "tool",
      toolCallId: "refund",
      nextStatus: "RUNNING",
      instructionId: "ins-1",
    });
    expect(planNextStep(running, [], me, null)).toEqual({ kind: "tool", toolCallId: "refund", nextStatus: "RUNNING" });
    const noted = planNextStep(task("RUNNING", ["lookup-order", "issue-refund"]), [exec("refund", "SUCCEEDED")], me, {
      id: "ins-1",
    });
    expect(noted).toEqual({ kind: "tool", toolCallId: "notify-customer", nextStatus: "VALIDATING" });
    // A refund the server froze for review (instructions changed) is left to people.
    expect(
      planNextStep(task("WAITING_FOR_HUMAN", ["lookup-order"]), [exec("refund", "NEEDS_HUMAN")], me, { id: "ins-1" }),
    ).toMatchObject({ kind: "stop", outcome: "review" });
  });
});

describe("an order's subtasks", () => {
  it("say the amount and the order in words, with the ids the plan reads unchanged", () => {
    const subtasks = refundSubtasksOf({ orderId: "demo-killed-1", amountCents: 8900, currency: "usd" });
    expect(subtasks.map((s) => s.id)).toEqual(refundSubtasks.map((s) => s.id));
    expect(subtasks.map((s) => s.mandatory)).toEqual(refundSubtasks.map((s) => s.mandatory));
    expect(subtasks[1]!.title).toBe("Refund 89.00 USD for order demo-killed-1");
    expect(subtasks[2]!.title).toBe("Tell the customer about the 89.00 USD refund");
  });
});
