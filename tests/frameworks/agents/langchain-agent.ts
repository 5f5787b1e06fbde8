import { HumanMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import type { VerityRun } from "@/sdk/frameworks/durable-tool";
import { verityMiddleware } from "@/sdk/frameworks/langchain";
import { prompt, type AgentRun, type RefundTool } from "../refund-tool";
import { scriptedChatModel, toolResultsOf } from "./scripted-chat-model";

/** The refund agent on LangChain v1: createAgent with Verity's middleware bringing the durable tool. */
export async function runLangChainAgent(run: VerityRun, refund: RefundTool, callId: string): Promise<AgentRun> {
  const agent = createAgent({
    model: scriptedChatModel(callId),
    tools: [],
    middleware: [verityMiddleware(run, [refund])],
  });
  const { messages } = await agent.invoke({ messages: [new HumanMessage(prompt)] });
  return { results: toolResultsOf(messages), finalText: String(messages.at(-1)?.content) };
}
