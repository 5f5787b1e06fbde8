import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { verityTool } from "@verity/sdk/ai-sdk";
import type { DurableToolResult } from "@verity/sdk";
import {
  refundArgsOf,
  runRefundExample,
  sayWhat,
  type ExampleOptions,
  type ExampleReport,
} from "../shared/refund-agent";

/**
 * A refund agent on the Vercel AI SDK. The model is the AI SDK's own mock
 * (ai/test), scripted to ask for one refund and then say what happened, so
 * this runs offline; put a real model in its place and nothing else changes.
 */
export function runAiSdkRefundAgent(options: ExampleOptions): Promise<ExampleReport> {
  return runRefundExample("ai-sdk", options, async (run, refund) => {
    const usage = {
      inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 0, text: 0, reasoning: undefined },
    };
    const model = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        const part = prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result");
        if (!part)
          return {
            content: [
              {
                type: "tool-call",
                toolCallId: `call_${options.orderId}`,
                toolName: "refund",
                input: JSON.stringify(refundArgsOf(options.orderId)),
              },
            ],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: [],
          };
        const output = part.type === "tool-result" && part.output.type === "json" ? part.output.value : undefined;
        return {
          content: [{ type: "text", text: sayWhat(output as unknown as DurableToolResult | undefined) }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        };
      },
    });
    const { steps, text } = await generateText({
      model,
      tools: { refund: verityTool(run, refund) },
      prompt: `Order ${options.orderId} arrived broken: refund it.`,
      stopWhen: isStepCount(3),
    });
    const result = steps.flatMap((s) => s.toolResults).at(0)?.output as DurableToolResult | undefined;
    return { result, finalText: text };
  });
}
