import { tool, type Tool } from "ai";
import type { z } from "zod";
import { runDurableTool, type DurableToolResult, type DurableToolSpec, type VerityRun } from "./durable-tool";

/**
 * A Vercel AI SDK tool (`tool({ description, inputSchema, execute })`) whose
 * every call goes through Verity's execution ledger, keyed by the task and
 * the AI SDK's toolCallId. Its output is a DurableToolResult: only
 * `status: "succeeded"` means the effect happened.
 *
 *   const refund = verityTool({ verity, taskId }, { name: "refund", …, verityTool: "payments.refund", call });
 *   await generateText({ model, tools: { refund }, stopWhen: stepCountIs(5), prompt });
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
