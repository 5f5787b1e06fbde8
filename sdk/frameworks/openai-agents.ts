import { tool } from "@openai/agents";
import type { z } from "zod";
import { runDurableTool, type DurableToolSpec, type VerityRun } from "./durable-tool";

/**
 * An OpenAI Agents SDK function tool whose every call goes through
 * Verity's execution ledger, keyed by the task and the model's call id
 * (`callId` of the function call item, which a resumed RunState keeps). The
 * model reads a DurableToolResult as JSON: only `status: "succeeded"` means
 * the effect happened.
 */
export function verityTool<Schema extends z.ZodObject>(run: VerityRun, spec: DurableToolSpec<Schema>) {
  // Widened: the Agents SDK resolves its strict/non-strict overloads only on a concrete schema type.
  const parameters: z.ZodObject = spec.inputSchema;
  return tool({
    name: spec.name,
    description: spec.description,
    parameters,
    execute: async (input, _context, details) => {
      const callId = details?.toolCall?.callId;
      // Without the model's call id a replay could not be told from a new call.
      if (!callId) throw new Error(`${spec.name}: the run gave no tool call id, so Verity cannot key this call`);
      return JSON.stringify(await runDurableTool(run, spec, input as z.output<Schema>, callId));
    },
  });
}
