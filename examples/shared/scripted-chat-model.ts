import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import type { DurableToolResult } from "@verity/sdk";
import { refundArgsOf, sayWhat } from "./refund-agent";

/** LangChain's fake chat model, scripted: one refund tool call, then what the tool message said. */
export function scriptedChatModel(orderId: string) {
  return fakeModel()
    .respondWithTools([{ name: "refund", args: refundArgsOf(orderId), id: `call_${orderId}` }])
    .respond((messages: BaseMessage[]) => new AIMessage(sayWhat(refundResultOf(messages))));
}

/** The durable tool's answer in a conversation, if there is one. */
export function refundResultOf(messages: BaseMessage[]): DurableToolResult | undefined {
  const out = messages.findLast((m) => ToolMessage.isInstance(m));
  return out ? (JSON.parse(String(out.content)) as DurableToolResult) : undefined;
}
