import { tool, type Tool, type ToolApprovalResponse, type ToolApprovalStatus } from "ai";
import type { z } from "zod";
import { runDurableTool, type DurableToolResult, type DurableToolSpec, type VerityRun } from "./durable-tool";

/**
 * A Vercel AI SDK tool (`tool({ description, inputSchema, execute })`) whose
 * every call goes through Verity's execution ledger, keyed by the task and
 * the AI SDK's toolCallId. Its output is a DurableToolResult: only
 * `status: "succeeded"` means the effect happened.
 *
 *   const refund = verityTool({ verity, taskId }, { name: "refund", …, verityTool: "payments.refund", call });
 *   await generateText({ model, tools: { refund }, stopWhen: isStepCount(5), prompt });
 */
export function verityTool<Schema extends z.ZodObject>(
  run: VerityRun,
  spec: DurableToolSpec<Schema>,
): Tool<z.output<Schema>, DurableToolResult> {
  return tool<z.output<Schema>, DurableToolResult, Record<string, unknown>>({
    description: spec.description,
    inputSchema: spec.inputSchema,
    execute: (input, { toolCallId }) => runDurableTool(run, spec, input, toolCallId),
  });
}

/**
 * The AI SDK's tool approval decided in Verity's review queue: use it as
 * the tool's entry in generateText's `toolApproval`. A call the spec names
 * an approval reason for opens its review in Verity and comes back as the
 * AI SDK's `user-approval` request (the generation ends with a
 * tool-approval-request part); answer it with verityApprovalResponses once
 * the review is decided. A call already decided is approved or denied at
 * once; a call needing no approval is not-applicable.
 */
export function verityToolApproval<Schema extends z.ZodObject>(run: VerityRun, spec: DurableToolSpec<Schema>) {
  return async (input: z.output<Schema>, options: { toolCallId: string }): Promise<ToolApprovalStatus> => {
    if (!spec.approval?.(input)) return "not-applicable";
    const result = await runDurableTool(run, spec, input, options.toolCallId);
    const decided = decisionOf(result);
    if (decided === undefined) return { type: "user-approval", reason: result.message };
    return decided.approved ? { type: "approved", reason: decided.reason } : { type: "denied", reason: decided.reason };
  };
}

/** A tool-approval-request part of a generation's content, as far as the bridge reads it. */
interface ApprovalRequestPart {
  type: string;
  approvalId?: string;
  isAutomatic?: boolean;
  toolCall?: { toolName: string; toolCallId: string; input: unknown };
}

/**
 * The answers to a generation's open approval requests for Verity's tools,
 * from Verity's review queue: a tool-approval-response for each decided
 * call (push them as a `tool` message and call generateText again: an
 * approved call's execute then gets the receipt of what Verity sent), and
 * the calls still waiting for a person. Safe to call again and from
 * another process: each review is its call's, keyed by the toolCallId.
 */
export async function verityApprovalResponses(
  run: VerityRun,
  specs: readonly DurableToolSpec[],
  content: readonly ApprovalRequestPart[],
): Promise<{ responses: ToolApprovalResponse[]; pending: DurableToolResult[] }> {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const responses: ToolApprovalResponse[] = [];
  const pending: DurableToolResult[] = [];
  for (const part of content) {
    if (part.type !== "tool-approval-request" || part.isAutomatic || !part.approvalId || !part.toolCall) continue;
    const spec = byName.get(part.toolCall.toolName);
    const parsed = spec?.inputSchema.safeParse(part.toolCall.input);
    if (!spec || !parsed?.success) continue;
    const result = await runDurableTool(run, spec, parsed.data, part.toolCall.toolCallId);
    const decided = decisionOf(result);
    if (decided === undefined) pending.push(result);
    else responses.push({ type: "tool-approval-response", approvalId: part.approvalId, ...decided });
  }
  return { responses, pending };
}

/** How Verity's review stands for a call: undefined while a person has yet to decide. */
function decisionOf(result: DurableToolResult): { approved: boolean; reason: string } | undefined {
  switch (result.status) {
    case "awaiting_approval":
      return undefined;
    case "rejected":
    case "blocked":
    case "refused":
      return { approved: false, reason: result.message };
    case "succeeded":
    case "waiting_for_reconciliation":
    case "failed":
      // Decided and acted on: the tool's execute replays the same call and tells the model what happened.
      return { approved: true, reason: `decided in Verity's review queue: ${result.status}` };
  }
}
