import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { VeritySaver, verityToolNode } from "@verity/sdk/langgraph";
import { runRefundExample, type ExampleOptions, type ExampleReport } from "../shared/refund-agent";
import { refundResultOf, scriptedChatModel } from "../shared/scripted-chat-model";

/**
 * A refund agent as a LangGraph.js graph: a model node and Verity's tool
 * node, whose calls go through the ledger keyed by the model's tool call
 * ids — a node re-executed after a crash gets the receipt, not a second
 * refund. The model is LangChain's scripted fake. The graph's thread is kept
 * in Verity too (VeritySaver): the task page of the thread lists its
 * checkpoints, each written under the thread's lease.
 */
export function runLangGraphRefundAgent(
  options: ExampleOptions,
  // Another checkpointer only where no Verity server keeps threads (the engine-only test harness).
  checkpointer: BaseCheckpointSaver = new VeritySaver({
    baseUrl: options.verityUrl,
    token: options.token,
    namespace: "examples",
  }),
): Promise<ExampleReport> {
  return runRefundExample("langgraph", options, async (run, refund) => {
    const model = scriptedChatModel(options.orderId);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode("tools", verityToolNode(run, [refund]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) => {
        const last = state.messages.at(-1);
        return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "tools" : END;
      })
      .addEdge("tools", "agent")
      .compile({ checkpointer });
    try {
      const { messages } = await graph.invoke(
        { messages: [new HumanMessage(`Order ${options.orderId} arrived broken: refund it.`)] },
        // A thread per run: a replay of the same order is a new conversation whose tool call is the same Verity call.
        { configurable: { thread_id: `${run.taskId}:${crypto.randomUUID()}` } },
      );
      return { result: refundResultOf(messages), finalText: String(messages.at(-1)?.content) };
    } finally {
      if (checkpointer instanceof VeritySaver) await checkpointer.close();
    }
  });
}
