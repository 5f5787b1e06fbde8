import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { verityToolNode } from "@verity/sdk/langgraph";
import { runRefundExample, type ExampleOptions, type ExampleReport } from "../shared/refund-agent";
import { refundResultOf, scriptedChatModel } from "../shared/scripted-chat-model";

/**
 * A refund agent as a LangGraph.js graph: a model node and Verity's tool
 * node, whose calls go through the ledger keyed by the model's tool call
 * ids — a node re-executed after a crash gets the receipt, not a second
 * refund. The model is LangChain's scripted fake.
 */
export function runLangGraphRefundAgent(options: ExampleOptions): Promise<ExampleReport> {
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
      .compile({ checkpointer: new MemorySaver() });
    const { messages } = await graph.invoke(
      { messages: [new HumanMessage(`Order ${options.orderId} arrived broken: refund it.`)] },
      { configurable: { thread_id: run.taskId } },
    );
    return { result: refundResultOf(messages), finalText: String(messages.at(-1)?.content) };
  });
}
