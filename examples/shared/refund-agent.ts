import { z } from "zod";
import {
  VerityClient,
  type DurableToolResult,
  type DurableToolSpec,
  type ToolOutcome,
  type VerityRun,
} from "@verity/sdk";

/**
 * What the four example refund agents share: the task they work on, the
 * refund tool (the sandbox payment provider that `npm start` runs on port
 * 4010, called with plain fetch as your own code would), and the command
 * line. Each framework's folder holds only the agent itself.
 */

export interface ExampleOptions {
  /** Verity, e.g. http://localhost:3000 */
  verityUrl: string;
  /** An agent token, e.g. the demo agent token `npm start` prints. */
  token: string;
  /** The sandbox payment provider, e.g. http://localhost:4010 */
  sandboxUrl: string;
  /** Names the task and the model's tool call: run again with the same order to see the receipt replayed. */
  orderId: string;
  /** Sandbox faults on the refund request, e.g. drop_response (the provider refunds, the answer is lost). */
  faults: string[];
}

export interface ExampleReport {
  taskId: string;
  taskStatus: string;
  result: DurableToolResult | undefined;
  finalText: string;
}

export const refundOrderInput = z.object({
  amount_cents: z.number().int().positive(),
  currency: z.string().regex(/^[a-z]{3}$/),
  charge_id: z.string(),
  customer_id: z.string(),
});
export type RefundTool = DurableToolSpec<typeof refundOrderInput>;

/** What the scripted model asks for: 42.00 USD back on the order's charge. */
export function refundArgsOf(orderId: string): z.output<typeof refundOrderInput> {
  return { amount_cents: 4200, currency: "usd", charge_id: `ch_${orderId}`, customer_id: `cus_${orderId}` };
}

/**
 * The durable refund: Verity's built-in irreversible payments.refund, made
 * at the sandbox under the ledger's idempotency key. The provider's record
 * names the execution (metadata), which is the evidence Verity checks.
 */
export function sandboxRefundTool(sandboxUrl: string, faults: string[] = []): RefundTool {
  return {
    name: "refund",
    description: "Refund a customer's charge. Money leaves; it cannot be undone.",
    inputSchema: refundOrderInput,
    verityTool: "payments.refund",
    // The refund is this task's last effect: its success moves the task on to VALIDATING.
    nextStatus: "VALIDATING",
    call: async (input, ctx): Promise<ToolOutcome> => {
      const res = await fetch(`${sandboxUrl}/v1/refunds`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Idempotency-Key": ctx.idempotencyKey,
          ...(faults.length ? { "X-Sandbox-Fault": faults.join(",") } : {}),
        },
        body: JSON.stringify({ ...input, metadata: { execution_id: ctx.executionId, task_id: ctx.taskId } }),
        signal: ctx.signal,
      });
      const body = (await res.json()) as Record<string, unknown> & { error?: { code?: string; message?: string } };
      if (res.ok) return { outcome: "succeeded", result: { refund_id: body.id }, evidence: body };
      // 503 not_processed: the provider says it stored nothing. Any other 5xx may have happened.
      if (res.status === 503 && body.error?.code === "not_processed")
        return { outcome: "failed", error: body.error.message ?? "not processed", retryable: true };
      if (res.status >= 400 && res.status < 500)
        return { outcome: "failed", error: `${res.status}: ${JSON.stringify(body)}`, retryable: false };
      return { outcome: "unknown", error: `${res.status}: ${JSON.stringify(body)}` };
    },
  };
}

/** The scripted model's last turn: what the tool answered, in words. */
export function sayWhat(result: DurableToolResult | undefined): string {
  if (!result) return "I did not refund anything.";
  switch (result.status) {
    case "succeeded":
      return result.replayed
        ? "This refund was already made; Verity returned its receipt and nothing was sent again."
        : "The refund is done.";
    case "waiting_for_reconciliation":
      return "The refund's outcome is unknown. Verity is reconciling it with the provider; I will not retry it.";
    case "awaiting_approval":
      return "The refund waits for a person's approval in Verity's review queue.";
    case "failed":
    case "blocked":
    case "rejected":
    case "refused":
      return `No refund: ${result.message}`;
  }
}

const refundSubtask = "issue-refund";

/**
 * The refund agent's task, from creation to its end: create it (a retry
 * with the same order is the same task), bring it to RUNNING, let the
 * framework's agent run, and complete it when the refund succeeded. A
 * refund whose outcome is unknown leaves the task RECONCILING: Verity's
 * reconciler settles it from the provider's record.
 */
export async function runRefundExample(
  framework: string,
  options: ExampleOptions,
  agent: (run: VerityRun, refund: RefundTool) => Promise<{ result: DurableToolResult | undefined; finalText: string }>,
): Promise<ExampleReport> {
  const verity = new VerityClient({ baseUrl: options.verityUrl, token: options.token });
  const taskId = `example-${framework}-${options.orderId}`;
  let task = await verity.createTask({
    workflow: "agent-task",
    taskId,
    intentId: `refund-${options.orderId}`,
    subtasks: [{ id: refundSubtask, title: "Issue the refund", mandatory: true }],
  });
  // A task created by an earlier run of this order may be further along: only a new one is moved to RUNNING.
  const toRunning = ["RECEIVED", "PLANNING", "READY", "RUNNING"];
  while (toRunning.indexOf(task.status) >= 0 && task.status !== "RUNNING") {
    const to = toRunning[toRunning.indexOf(task.status) + 1] ?? "RUNNING";
    task = (await verity.transition(taskId, { expectedVersion: task.version, to })).task;
  }
  const { result, finalText } = await agent({ verity, taskId }, sandboxRefundTool(options.sandboxUrl, options.faults));
  task = await verity.getTask(taskId);
  if (result?.status === "succeeded" && task.status === "VALIDATING") {
    task = (
      await verity.transition(taskId, {
        expectedVersion: task.version,
        to: "COMPLETED",
        patch: { subtasks: [{ id: refundSubtask, status: "COMPLETED" }] },
        reason: "refund confirmed by the provider",
      })
    ).task;
  }
  return { taskId, taskStatus: task.status, result, finalText };
}

/** `npx tsx examples/<framework>-refund-agent/main.ts`: options from the environment, one line of report. */
export async function runFromCommandLine(
  framework: string,
  agent: (options: ExampleOptions) => Promise<ExampleReport>,
): Promise<void> {
  const token = process.env.VERITY_TOKEN;
  if (!token) {
    console.error(
      "Set VERITY_TOKEN to an agent token: `npm start` prints the demo agent's (vrt_demo_refund_bot_token_for_local_use_only).",
    );
    process.exit(2);
  }
  const options: ExampleOptions = {
    verityUrl: process.env.VERITY_URL ?? "http://localhost:3000",
    token,
    sandboxUrl: process.env.SANDBOX_URL ?? "http://localhost:4010",
    orderId: process.env.ORDER_ID ?? crypto.randomUUID().slice(0, 8),
    faults: (process.env.FAULT ?? "").split(",").filter(Boolean),
  };
  const report = await agent(options);
  console.log(`${framework}: ${report.finalText}`);
  console.log(`  task ${report.taskId} is ${report.taskStatus}: ${options.verityUrl}/tasks/${report.taskId}`);
  if (report.result) console.log(`  ${report.result.status}: ${report.result.message}`);
  console.log(`  run it again with ORDER_ID=${options.orderId} to replay the same tool call`);
}
