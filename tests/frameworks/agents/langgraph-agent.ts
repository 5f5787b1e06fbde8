import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { VerityRun } from "@/sdk/frameworks/durable-tool";
import { verityToolNode } from "@/sdk/frameworks/langgraph";
import { prompt, type AgentRun, type RefundTool } from "../refund-tool";
import { scriptedChatModel, toolResultsOf } from "./scripted-chat-model";

/** The refund agent as a LangGraph.js graph: a model node, and Verity's tool node for the durable tool. */
export async function runLangGraphAgent(run: VerityRun, refund: RefundTool, callId: string): Promise<AgentRun> {
  const model = scriptedChatModel(callId);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode("tools", verityToolNode(run, [refund]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => {
      const last = state.messages.at(-1);
      return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "tools" : END;
    })
    .addEdge("tools", "agent")
    .compile();
  const { messages } = await graph.invoke({ messages: [new HumanMessage(prompt)] });
  return { results: toolResultsOf(messages), finalText: String(messages.at(-1)?.content) };
}
