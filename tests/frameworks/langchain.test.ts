import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import type { ToolCallContext } from "@/sdk";
import { verityMiddleware } from "@/sdk/frameworks/langchain";
import type { VerityApprovalInterrupt } from "@/sdk/frameworks/langgraph";
import { alice, connectorsFor, runningTask } from "@/tests/helpers/effects";
import { scriptedChatModel } from "./agents/scripted-chat-model";
import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";
import { prompt, sandboxRefundTool } from "./refund-tool";

const env = useFrameworkEnvironment();
describeDurableRefunds("langchain", env);

describe("langchain: approval through the agent's interrupt", () => {
  it("the agent pauses while the call waits in Verity's review queue and finishes once the operator approves", async () => {
    const task = await runningTask(env.db);
    const run = env.runOf(task.id);
    const calls: ToolCallContext[] = [];
    const refund = sandboxRefundTool(env.sandboxUrl, {
      approval: "refund of a disputed order",
      onCall: (c) => calls.push(c),
    });
    const agent = createAgent({
      model: scriptedChatModel("call_refund_m"),
      tools: [],
      middleware: [verityMiddleware(run, [refund], { interruptForApproval: true })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: `thread-${task.id}` } };

    const paused = await agent.invoke({ messages: [new HumanMessage(prompt)] }, config);
    const interrupts = (paused as { __interrupt__?: Array<{ value: VerityApprovalInterrupt }> }).__interrupt__ ?? [];
    expect(interrupts.map((i) => i.value)).toMatchObject([
      { kind: "verity_approval", toolCallId: "refund:call_refund_m" },
    ]);
    expect(await env.refundsAtProvider(task.id)).toBe(0);

    const reviewId = interrupts[0]?.value.reviewId ?? "";
    const review = await getReviewOrThrow(env.db, reviewId);
    await decideReview(
      env.db,
      reviewId,
      { expected_version: review.version, decision: "approve_execute", reason: "the order was checked" },
      alice,
      connectorsFor(env.sandboxUrl),
    );
    const { messages } = await agent.invoke(new Command({ resume: "decided" }), config);
    expect(String(messages.at(-1)?.content)).toContain("Refund done");
    expect(calls).toEqual([]);
    expect(await env.refundsAtProvider(task.id)).toBe(1);
  });
});
