import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import type { VerityRun } from "@/sdk/frameworks/durable-tool";
import { settleVerityApprovals, verityTool } from "@/sdk/frameworks/openai-agents";
import { parsedResult, prompt, refundArgs, sayWhat, type AgentRun, type RefundTool } from "../refund-tool";

/**
 * A scripted OpenAI Agents model: a refund function call, then what its
 * output said. It answers from the conversation alone (no turn counter), so
 * a run restored from its saved RunState meets the same script.
 */
class ScriptedRefundModel implements Model {
  constructor(private readonly callId: string) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const usage = new Usage();
    const items = Array.isArray(request.input) ? request.input : [];
    const out = items.find((i) => i.type === "function_call_result");
    if (out?.type !== "function_call_result")
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
    const raw = typeof out.output === "string" ? out.output : "text" in out.output ? out.output.text : undefined;
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

/** The refund agent: the scripted model and the durable refund tool. */
export function refundAgent(run: VerityRun, refund: RefundTool, callId: string) {
  return new Agent({
    name: "refund-agent",
    instructions: "Refund what the customer asks for.",
    model: new ScriptedRefundModel(callId),
    tools: [verityTool(run, refund)],
  });
}

/**
 * The refund agent on the OpenAI Agents SDK: an Agent with the durable tool,
 * run by a Runner without tracing. A call that needs approval interrupts the
 * run; Verity's review decides it (settleVerityApprovals), and the run
 * resumes from its state once nothing is pending.
 */
export async function runOpenAiAgentsAgent(run: VerityRun, refund: RefundTool, callId: string): Promise<AgentRun> {
  const agent = refundAgent(run, refund, callId);
  const runner = new Runner({ tracingDisabled: true });
  let result = await runner.run(agent, prompt);
  while (result.interruptions.length > 0) {
    const pending = await settleVerityApprovals(run, [refund], result.state);
    if (pending.length > 0) return { results: pending, finalText: sayWhat(pending[0]) };
    result = await runner.run(agent, result.state);
  }
  const results = result.newItems.flatMap((item) =>
    item.type === "tool_call_output_item" ? [parsedResult(item.output)] : [],
  );
  return { results, finalText: String(result.finalOutput) };
}
