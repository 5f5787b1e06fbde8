/**
 * `@verity/sdk/langgraph`: VeritySaver (LangGraph.js threads kept by Verity)
 * and the node helpers whose side effects go through the execution ledger.
 */
export { VeritySaver, type VeritySaverOptions } from "./verity-saver";
export { callVerityToolInNode, verityToolNode } from "../frameworks/langgraph";
