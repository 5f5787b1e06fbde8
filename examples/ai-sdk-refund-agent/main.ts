import { runFromCommandLine } from "../shared/refund-agent";
import { runAiSdkRefundAgent } from "./agent";

await runFromCommandLine("ai-sdk", runAiSdkRefundAgent);
