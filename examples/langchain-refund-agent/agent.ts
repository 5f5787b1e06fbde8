import { HumanMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { verityMiddleware } from "@verity/sdk/langchain";
import { runRefundExample, type ExampleOptions, type ExampleReport } from "../shared/refund-agent";
import { refundResultOf, scriptedChatModel } from "../shared/scripted-chat-model";

/**
 * A refund agent on LangChain v1: `createAgent` with Verity's middleware,
 * which brings the durable refund tool and runs its calls through the
 * ledger in `wrapToolCall`. The model is LangChain's scripted fake.
 */
export function runLangChainRefundAgent(options: ExampleOptions): Promise<ExampleReport> {
  return runRefundExample("langchain", options, async (run, refund) => {
    const agent = createAgent({
      model: scriptedChatModel(options.orderId),
      tools: [],
      middleware: [verityMiddleware(run, [refund])],
    });
    const { messages } = await agent.invoke({
      messages: [new HumanMessage(`Order ${options.orderId} arrived broken: refund it.`)],
    });
    return { result: refundResultOf(messages), finalText: String(messages.at(-1)?.content) };
  });
}
