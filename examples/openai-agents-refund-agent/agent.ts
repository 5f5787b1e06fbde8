import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import type { DurableToolResult } from "@verity/sdk";
import { verityTool } from "@verity/sdk/openai-agents";
import {
  refundArgsOf,
  runRefundExample,
  sayWhat,
  type ExampleOptions,
  type ExampleReport,
} from "../shared/refund-agent";

/** A scripted OpenAI Agents model: one refund function call, then what its output said. */
class ScriptedModel implements Model {
  constructor(private readonly orderId: string) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = Array.isArray(request.input) ? request.input : [];
    const out = items.find((i) => i.type === "function_call_result");
    if (out?.type !== "function_call_result")
      return {
        usage: new Usage(),
        output: [
          {
            type: "function_call",
            callId: `call_${this.orderId}`,
            name: "refund",
            arguments: JSON.stringify(refundArgsOf(this.orderId)),
            status: "completed",
          },
        ],
      };
    const raw = typeof out.output === "string" ? out.output : "text" in out.output ? out.output.text : "";
    const text = sayWhat(JSON.parse(raw) as DurableToolResult);
    return {
      usage: new Usage(),
      output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }],
    };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("this scripted model does not stream");
  }
}

/**
 * A refund agent on the OpenAI Agents SDK, with a scripted Model so it runs
 * offline (no API key, tracing off); give the Agent a real model instead
 * and nothing else changes.
 */
export function runOpenAiAgentsRefundAgent(options: ExampleOptions): Promise<ExampleReport> {
  return runRefundExample("openai-agents", options, async (run, refund) => {
    const agent = new Agent({
      name: "refund-agent",
      instructions: "Refund broken orders with the refund tool.",
      model: new ScriptedModel(options.orderId),
      tools: [verityTool(run, refund)],
    });
    const outcome = await new Runner({ tracingDisabled: true }).run(agent, `Order ${options.orderId} arrived broken.`);
    const output = outcome.newItems.find((item) => item.type === "tool_call_output_item");
    return {
      result: output ? (JSON.parse(String(output.output)) as DurableToolResult) : undefined,
      finalText: String(outcome.finalOutput),
    };
  });
}
