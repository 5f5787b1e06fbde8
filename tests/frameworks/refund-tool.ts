import { z } from "zod";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { ToolCallContext, ToolOutcome } from "@/sdk";
import type { DurableToolResult, DurableToolSpec } from "@/sdk/frameworks/durable-tool";

/**
 * The refund agent's one tool and its script, shared by the framework
 * agents in ./agents: the built-in irreversible payments.refund, made at
 * the sandbox provider over HTTP.
 */
export const refundArgs = { amount_cents: 2500, currency: "usd", charge_id: "ch_fw", customer_id: "cus_fw" };

const refundInput = z.object({
  amount_cents: z.number().int().positive(),
  currency: z.string().length(3),
  charge_id: z.string(),
  customer_id: z.string(),
});

export type RefundTool = DurableToolSpec<typeof refundInput>;

/**
 * The refund tool: the provider gets the ledger's idempotency key and the
 * execution's id (its evidence names them). `faults`: the sandbox's fault
 * injection on this tool's requests (e.g. drop_response); `onCall` sees
 * every call that reaches the provider; `approval`: a person approves each
 * call first, for this reason.
 */
export function sandboxRefundTool(
  sandboxUrl: string,
  options: { faults?: string[]; onCall?: (ctx: ToolCallContext) => void; approval?: string } = {},
): RefundTool {
  const payments = new SandboxPaymentConnector({ baseUrl: sandboxUrl, faults: options.faults ?? [] });
  return {
    name: "refund",
    description: "Refund a customer's charge (money leaves; cannot be undone)",
    inputSchema: refundInput,
    verityTool: "payments.refund",
    ...(options.approval ? { approval: () => options.approval } : {}),
    call: async (input, ctx): Promise<ToolOutcome> => {
      options.onCall?.(ctx);
      const out = await payments.refund(
        {
          idempotencyKey: ctx.idempotencyKey,
          amountCents: input.amount_cents,
          currency: input.currency,
          chargeId: input.charge_id,
          customerId: input.customer_id,
          metadata: { executionId: ctx.executionId, taskId: ctx.taskId },
        },
        { signal: ctx.signal },
      );
      switch (out.kind) {
        case "succeeded":
          return {
            outcome: "succeeded",
            result: { refund_id: out.refund.id },
            evidence: { ...out.evidence, metadata: out.refund.metadata },
          };
        case "failed":
          return { outcome: "failed", error: out.message, retryable: out.retryable };
        case "unknown":
          return { outcome: "unknown", error: out.message };
      }
    },
  };
}

export interface AgentRun {
  /** What each durable tool call answered the model. */
  results: DurableToolResult[];
  /** The model's last words. */
  finalText: string;
}

export const prompt = "Refund 25.00 USD on charge ch_fw for customer cus_fw.";

/** The scripted model's second turn: what the tool answered, in words. */
export function sayWhat(result: DurableToolResult | undefined): string {
  if (!result) return "No refund was attempted.";
  switch (result.status) {
    case "succeeded":
      return `Refund done (${result.executionId}).`;
    case "waiting_for_reconciliation":
      return "The refund's outcome is unknown; Verity is reconciling it. I will not retry it.";
    case "awaiting_approval":
      return "The refund waits for a person's approval in Verity's review queue.";
    case "failed":
    case "blocked":
    case "rejected":
    case "refused":
      return `No refund: ${result.message}`;
  }
}

/** A tool output the model read (JSON text) as the result it is. */
export function parsedResult(content: unknown): DurableToolResult {
  return JSON.parse(String(content)) as DurableToolResult;
}
