import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { verityTool } from "@/sdk/frameworks/ai-sdk";
import type { DurableToolResult, VerityRun } from "@/sdk/frameworks/durable-tool";
import { prompt, refundArgs, sayWhat, type AgentRun, type RefundTool } from "../refund-tool";

/** The refund agent on the AI SDK: generateText with the durable tool, a MockLanguageModelV4 scripting the model. */
export async function runAiSdkAgent(run: VerityRun, refund: RefundTool, callId: string): Promise<AgentRun> {
  let turn = 0;
  const usage = {
    inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 5, text: 5, reasoning: undefined },
  };
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt: messages }) => {
      if (turn++ === 0)
        return {
          content: [{ type: "tool-call", toolCallId: callId, toolName: "refund", input: JSON.stringify(refundArgs) }],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        };
      const part = messages.flatMap((m) => (m.role === "tool" ? m.content : [])).find((p) => p.type === "tool-result");
      const output = part?.type === "tool-result" && part.output.type === "json" ? part.output.value : undefined;
      return {
        content: [{ type: "text", text: sayWhat(output as unknown as DurableToolResult | undefined) }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  const result = await generateText({
    model,
    tools: { refund: verityTool(run, refund) },
    prompt,
    stopWhen: isStepCount(3),
  });
  return {
    results: result.steps.flatMap((s) => s.toolResults.map((r) => r.output as DurableToolResult)),
    finalText: result.text,
  };
}
