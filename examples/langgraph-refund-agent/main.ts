import { runFromCommandLine } from "../shared/refund-agent";
import { runLangGraphRefundAgent } from "./agent";

await runFromCommandLine("langgraph", runLangGraphRefundAgent);
