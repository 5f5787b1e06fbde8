import { runFromCommandLine } from "../shared/refund-agent";
import { runOpenAiAgentsRefundAgent } from "./agent";

await runFromCommandLine("openai-agents", runOpenAiAgentsRefundAgent);
