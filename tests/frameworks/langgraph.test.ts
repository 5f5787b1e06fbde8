import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { ToolCallContext } from "@/sdk";
import type { DurableToolResult } from "@/sdk/frameworks/durable-tool";
import { callVerityToolInNode, verityToolNode, type VerityApprovalInterrupt } from "@/sdk/frameworks/langgraph";
import { decideReview } from "@/lib/use-cases/reviews/decide-review";
import { getReviewOrThrow } from "@/lib/use-cases/reviews/get-review";
import { alice, connectorsFor, runningTask } from "@/tests/helpers/effects";
import { scriptedChatModel } from "./agents/scripted-chat-model";
import { describeDurableRefunds, useFrameworkEnvironment } from "./durable-refund-cases";
import { refundArgs, sandboxRefundTool } from "./refund-tool";

const env = useFrameworkEnvironment();
describeDurableRefunds("langgraph", env);

describe("langgraph: a durable call inside a node", () => {
  it("a node that fails after its refund is executed again from the checkpoint: the second time gets the receipt, one refund in all (langgraph#8039)", async () => {
    const task = await runningTask(env.db);
    const run = env.runOf(task.id);
    const calls: ToolCallContext[] = [];
    const refund = sandboxRefundTool(env.sandboxUrl, { onCall: (ctx) => calls.push(ctx) });
    const seen: DurableToolResult[] = [];
    let executions = 0;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("refund", async (_state, config) => {
        const result = await callVerityToolInNode(run, refund, refundArgs, config);
        seen.push(result);
        // The node's own later work fails the first time, after the refund was made.
        if (executions++ === 0) throw new Error("the CRM note after the refund failed");
        return { messages: [new AIMessage(result.message)] };
      })
      .addEdge(START, "refund")
      .addEdge("refund", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: `thread-${task.id}` } };

    await expect(graph.invoke({ messages: [] }, config)).rejects.toThrow("the CRM note after the refund failed");
    // Resuming the thread runs the failed node again, from the same checkpoint and at the same step.
    const { messages } = await graph.invoke(null, config);

    expect(seen.map((r) => r.status === "succeeded" && r.replayed)).toEqual([false, true]);
    expect(seen[1]?.toolCallId).toBe(seen[0]?.toolCallId);
    expect(seen[0]?.toolCallId).toMatch(/^refund:refund:step-\d+$/);
    expect(calls).toHaveLength(1);
    expect(await env.refundsAtProvider(task.id)).toBe(1);
    expect(String(messages.at(-1)?.content)).toContain("recorded receipt");
  });
});

describe("langgraph: approval through interrupt()", () => {
  it("a call waiting for approval pauses the graph; the operator's decision in Verity resumes it and the refund is made once", async () => {
    const task = await runningTask(env.db);
    const run = env.runOf(task.id);
    const calls: ToolCallContext[] = [];
    const refund = sandboxRefundTool(env.sandboxUrl, {
      approval: "refund above the agent's own limit",
      onCall: (ctx) => calls.push(ctx),
    });
    const model = scriptedChatModel("call_refund_i");
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode("tools", verityToolNode(run, [refund], { interruptForApproval: true }))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) => {
        const last = state.messages.at(-1);
        return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "tools" : END;
      })
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: `thread-${task.id}` } };

    const waitingApprovals = async () =>
      (await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value as VerityApprovalInterrupt);

    await graph.invoke({ messages: [new HumanMessage("Refund order 7.")] }, config);
    const waiting = await waitingApprovals();
    expect(waiting).toEqual([expect.objectContaining({ kind: "verity_approval", toolCallId: "refund:call_refund_i" })]);
    expect(calls).toEqual([]);

    // Resumed before anyone decided: still waiting, paused again, nothing sent.
    await graph.invoke(new Command({ resume: "check again" }), config);
    expect(await waitingApprovals()).toEqual([expect.objectContaining({ reviewId: waiting[0]?.reviewId })]);
    expect(await env.refundsAtProvider(task.id)).toBe(0);

    const reviewId = waiting[0]?.reviewId ?? "";
    const review = await getReviewOrThrow(env.db, reviewId);
    await decideReview(
      env.db,
      reviewId,
      { expected_version: review.version, decision: "approve_execute", reason: "the order was checked" },
      alice,
      connectorsFor(env.sandboxUrl),
    );
    const { messages } = await graph.invoke(new Command({ resume: "decided" }), config);
    expect(String(messages.at(-1)?.content)).toContain("Refund done");
    expect(await waitingApprovals()).toEqual([]);
    expect(calls).toEqual([]);
    expect(await env.refundsAtProvider(task.id)).toBe(1);
  });
});
