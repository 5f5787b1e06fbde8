import { RunState, Runner } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import type { ToolCallContext } from "@/sdk";
import { settleVerityApprovals } from "@/sdk/frameworks/openai-agents";
import { alice, connectorsFor, runningTask } from "@/tests/helpers/effects";
import { refundAgent } from "./agents/openai-agents-agent";
import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";
import { prompt, sandboxRefundTool } from "./refund-tool";

const env = useFrameworkEnvironment();
describeDurableRefunds("openai-agents", env);

describe("openai-agents: needsApproval decided in Verity's review queue", () => {
  it("the interrupted run's saved state, restored after the operator approved, resumes to one refund", async () => {
    const task = await runningTask(env.db);
    const run = env.runOf(task.id);
    const calls: ToolCallContext[] = [];
    const refund = sandboxRefundTool(env.sandboxUrl, {
      approval: "refund of a disputed order",
      onCall: (c) => calls.push(c),
    });
    const runner = new Runner({ tracingDisabled: true });

    const first = await runner.run(refundAgent(run, refund, "call_refund_s"), prompt);
    expect(first.interruptions.map((i) => i.name)).toEqual(["refund"]);
    const pending = await settleVerityApprovals(run, [refund], first.state);
    expect(pending).toMatchObject([{ status: "awaiting_approval", toolCallId: "refund:call_refund_s" }]);
    const saved = first.state.toString();
    expect(await env.refundsAtProvider(task.id)).toBe(0);

    const reviewId = pending[0]?.reviewId ?? "";
    const review = await getReviewOrThrow(env.db, reviewId);
    await decideReview(
      env.db,
      reviewId,
      { expected_version: review.version, decision: "approve_execute", reason: "the order was checked" },
      alice,
      connectorsFor(env.sandboxUrl),
    );

    // Another process: the same agent definition, the run's state from its string.
    const agent = refundAgent(run, refund, "call_refund_s");
    const state = await RunState.fromString(agent, saved);
    expect(await settleVerityApprovals(run, [refund], state)).toEqual([]);
    const resumed = await runner.run(agent, state);
    expect(String(resumed.finalOutput)).toContain("Refund done");
    expect(calls).toEqual([]);
    expect(await env.refundsAtProvider(task.id)).toBe(1);
  });
});
