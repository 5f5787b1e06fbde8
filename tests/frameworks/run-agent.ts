import type { VerityRun } from "@/sdk/frameworks/durable-tool";
import type { AgentRun, RefundTool } from "./refund-tool";

/**
 * The same refund agent in each framework, driven by that framework's own
 * scripted model: turn one asks for `refund` under a fixed tool-call id (so
 * a rerun after a crash replays the same call, as a resumed run does), turn
 * two says in words what the tool answered. Each framework is loaded only
 * when asked for: a worker process starts faster.
 */
export const frameworks = ["ai-sdk", "langchain", "openai-agents", "langgraph"] as const;
export type Framework = (typeof frameworks)[number];

export async function runRefundAgent(
  framework: Framework,
  run: VerityRun,
  refund: RefundTool,
  callId: string,
): Promise<AgentRun> {
  switch (framework) {
    case "ai-sdk":
      return (await import("./agents/ai-sdk-agent")).runAiSdkAgent(run, refund, callId);
    case "langchain":
      return (await import("./agents/langchain-agent")).runLangChainAgent(run, refund, callId);
    case "openai-agents":
      return (await import("./agents/openai-agents-agent")).runOpenAiAgentsAgent(run, refund, callId);
    case "langgraph":
      return (await import("./agents/langgraph-agent")).runLangGraphAgent(run, refund, callId);
  }
}
