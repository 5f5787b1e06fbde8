import { tool, type RunState } from "@openai/agents";
import type { z } from "zod";
import { runDurableTool, type DurableToolResult, type DurableToolSpec, type VerityRun } from "./durable-tool";

/**
 * An OpenAI Agents SDK function tool whose every call goes through
 * Verity's execution ledger, keyed by the task and the model's call id
 * (`callId` of the function call item, which a resumed RunState keeps). The
 * model reads a DurableToolResult as JSON: only `status: "succeeded"` means
 * the effect happened.
 *
 * A spec with `approval` makes the tool `needsApproval` for the calls it
 * names a reason for: the run stops with an interruption, as the Agents SDK
 * does, and settleVerityApprovals decides it from Verity's review queue.
 */
export function verityTool<Schema extends z.ZodObject>(run: VerityRun, spec: DurableToolSpec<Schema>) {
  // Widened: the Agents SDK resolves its strict/non-strict overloads only on a concrete schema type.
  const parameters: z.ZodObject = spec.inputSchema;
  return tool({
    name: spec.name,
    description: spec.description,
    parameters,
    needsApproval: async (_context, input) => Boolean(spec.approval?.(input as z.output<Schema>)),
    execute: async (input, _context, details) => {
      const callId = details?.toolCall?.callId;
      // Without the model's call id a replay could not be told from a new call.
      if (!callId) throw new Error(`${spec.name}: the run gave no tool call id, so Verity cannot key this call`);
      return JSON.stringify(await runDurableTool(run, spec, input as z.output<Schema>, callId));
    },
  });
}

/** An interruption still waiting for a person in Verity's review queue. */
export type PendingVerityApproval = Extract<DurableToolResult, { status: "awaiting_approval" }>;

/**
 * The Agents SDK's tool approval, decided in Verity: for each interruption
 * of the run that is a call of one of `specs`, opens its review in Verity's
 * queue (the first time) or reads how it was decided, and approves or
 * rejects it in `state`. Returns the calls still waiting: resume the run
 * (`runner.run(agent, state)`) when there are none. Safe to call again, from
 * another process with the state restored by RunState.fromString: the
 * review is the call's, keyed by its callId.
 *
 * Approved, the run's own execute gets the receipt of the refund Verity made
 * on approval (a released call of a registered tool is sent here, once).
 * Rejected, the model reads the DurableToolResult saying so (the same JSON
 * a call's output is) and nothing is ever sent.
 */
export async function settleVerityApprovals(
  run: VerityRun,
  specs: readonly DurableToolSpec[],
  state: RunState<any, any>,
): Promise<PendingVerityApproval[]> {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const pending: PendingVerityApproval[] = [];
  for (const item of state.getInterruptions()) {
    const call = item.rawItem;
    const spec = call.type === "function_call" ? byName.get(call.name) : undefined;
    if (!spec || call.type !== "function_call") continue;
    const parsed = spec.inputSchema.safeParse(JSON.parse(call.arguments));
    if (!parsed.success) {
      state.reject(item, { message: `Invalid arguments for ${spec.name}: ${parsed.error.message}` });
      continue;
    }
    const result = await runDurableTool(run, spec, parsed.data, call.callId);
    switch (result.status) {
      case "awaiting_approval":
        pending.push(result);
        break;
      case "rejected":
      case "blocked":
      case "refused":
        state.reject(item, { message: JSON.stringify(result) });
        break;
      case "succeeded":
      case "waiting_for_reconciliation":
      case "failed":
        // Decided and acted on: the run's execute replays the same call and tells the model what happened.
        state.approve(item);
        break;
    }
  }
  return pending;
}
