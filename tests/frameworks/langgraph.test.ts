import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { ToolCallContext } from "@/sdk";
import type { DurableToolResult } from "@/sdk/frameworks/durable-tool";
import { callVerityToolInNode } from "@/sdk/frameworks/langgraph";
import { runningTask } from "@/tests/helpers/effects";
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
