import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import type { DurableToolResult } from "@/sdk/frameworks/durable-tool";
import { parsedResult, refundArgs, sayWhat } from "../refund-tool";

/** LangChain's fake chat model, scripted: a refund tool call named `callId`, then what the tool message said. */
export function scriptedChatModel(callId: string) {
  return fakeModel()
    .respondWithTools([{ name: "refund", args: refundArgs, id: callId }])
    .respond((messages: BaseMessage[]) => {
      const out = messages.findLast((m) => ToolMessage.isInstance(m));
      return new AIMessage(sayWhat(out ? parsedResult(out.content) : undefined));
    });
}

export function toolResultsOf(messages: BaseMessage[]): DurableToolResult[] {
  return messages.filter((m) => ToolMessage.isInstance(m)).map((m) => parsedResult(m.content));
}
