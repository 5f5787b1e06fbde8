import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import type { VerityRun } from "@/sdk/frameworks/durable-tool";
import { verityTool } from "@/sdk/frameworks/openai-agents";
import { parsedResult, prompt, refundArgs, sayWhat, type AgentRun, type RefundTool } from "../refund-tool";

/** A scripted OpenAI Agents model: a refund function call, then what its output said. */
class ScriptedRefundModel implements Model {
  private turn = 0;
  constructor(private readonly callId: string) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const usage = new Usage();
    if (this.turn++ === 0)
      return {
        usage,
        output: [
          {
            type: "function_call",
            callId: this.callId,
            name: "refund",
            arguments: JSON.stringify(refundArgs),
            status: "completed",
          },
        ],
      };
    const items = Array.isArray(request.input) ? request.input : [];
    const out = items.find((i) => i.type === "function_call_result");
    const output = out?.type === "function_call_result" ? out.output : undefined;
    const raw = typeof output === "string" ? output : output && "text" in output ? output.text : undefined;
    const text = sayWhat(raw === undefined ? undefined : parsedResult(raw));
    return {
      usage,
      output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }],
    };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

/** The refund agent on the OpenAI Agents SDK: an Agent with the durable tool, run by a Runner without tracing. */
export async function runOpenAiAgentsAgent(run: VerityRun, refund: RefundTool, callId: string): Promise<AgentRun> {
  const agent = new Agent({
    name: "refund-agent",
    instructions: "Refund what the customer asks for.",
    model: new ScriptedRefundModel(callId),
    tools: [verityTool(run, refund)],
  });
  const result = await new Runner({ tracingDisabled: true }).run(agent, prompt);
  const results = result.newItems.flatMap((item) =>
    item.type === "tool_call_output_item" ? [parsedResult(item.output)] : [],
  );
  return { results, finalText: String(result.finalOutput) };
}
