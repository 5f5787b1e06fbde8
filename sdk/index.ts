/**
 * Verity's TypeScript SDK: `new VerityClient({ baseUrl, token })`. Talks to
 * /api/v1 over fetch only; no server module is loaded at run time (the wire
 * types are type-only imports of the server's schemas).
 */
export { VerityClient, type VerityClientOptions } from "./client";
export {
  apiErrorOf,
  isRetryableStatus,
  isVerityApiError,
  parseProblem,
  VerityApiError,
  VerityNetworkError,
  type ProblemBody,
} from "./errors";
export { killAtFaultPoints, parseFaultPoints } from "./fault-points";
export { withLease, type LeaseApi, type LeaseHandle, type WithLeaseOptions } from "./lease";
export {
  executeToolProtocol,
  faultPoints,
  type ExecuteToolInput,
  type FaultPoint,
  type FaultPointContext,
  type FaultPointHook,
  type ToolCallContext,
  type ToolExecution,
  type ToolOutcome,
} from "./tool-protocol";
export type * from "./types";
export {
  runDurableTool,
  verityToolCallId,
  type DurableToolResult,
  type DurableToolSpec,
  type VerityRun,
} from "./frameworks/durable-tool";
export type * from "./graph-types";
