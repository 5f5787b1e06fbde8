import { runFromCommandLine } from "../shared/refund-agent";
import { runLangChainRefundAgent } from "./agent";

await runFromCommandLine("langchain", runLangChainRefundAgent);
