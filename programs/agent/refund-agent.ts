import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { FailedOutcome, PaymentConnector, ProviderEvidence, UnknownOutcome } from "@/lib/connectors/types";
import {
  FaultChooser,
  faultHeaderOf,
  intentIdOf,
  noteRequestOf,
  orderOf,
  orderOfIntent,
  refundRequestOf,
  taskIdOf,
  type Order,
} from "@/programs/agent/order";
import {
  NOTE_CALL,
  planNextStep,
  REFUND_CALL,
  refundSubtasksOf,
  type AgentStep,
  type TaskOutcome,
} from "@/programs/agent/plan";
import {
  isVerityApiError,
  VerityApiError,
  VerityNetworkError,
  type Execution,
  type LeaseHandle,
  type Task,
  type ToolCallContext,
  type ToolOutcome,
  type VerityClient,
} from "@/sdk";

/**
 * The demo refund agent: for each order, an agent-task with its subtasks,
 * driven to COMPLETED through Verity — lease, fenced transitions, and every
 * external call through the execution ledger (sdk/ executeTool). The
 * decisions are programs/agent/plan.ts; this module only carries them out.
 *
 * An unknown outcome is not this agent's to resolve: the task is left in
 * RECONCILING for the server's reconciler (and the review queue after it),
 * and reported. A crash anywhere is resumed with `resume()`, which continues
 * each unfinished task of this agent from its last committed state.
 */

export interface RefundAgentOptions {
  client: VerityClient;
  sandboxUrl: string;
  /** The SPIFFE id of the agent's token: whose tasks `resume` continues. */
  identity: string;
  /** How long a provider call may take before its outcome is unknown. */
  callTimeoutMs: number;
  leaseTtlSeconds: number;
  /**
   * How long to wait out a live lease on a task before reporting it
   * in_flight (default 0). A worker resumed after a crash waits for its dead
   * predecessor's lease to expire: a lease is one process's, and nothing
   * else tells a dead process from a slow one.
   */
  leaseWaitMs?: number;
  faults: readonly string[];
  faultRate: number;
  seed: number;
  /** Where the provider sends this agent's refund events (X-Sandbox-Webhook-Url); default: the provider's own setting. */
  webhookUrl?: string;
  /**
   * The payment provider to refund through, given the sandbox fault header
   * of this call (when one was drawn); default: the sandbox's own API at
   * `sandboxUrl`. With VERITY_PAYMENTS_PROVIDER=stripe, scripts/agent.ts
   * passes Stripe's connector, so the agent refunds where the server looks.
   */
  payments?: (faultHeader: string | undefined) => PaymentConnector;
  log: (line: string) => void;
}

export interface CallReport {
  status: string;
  attempts: number;
  providerId?: string;
}

export interface TaskReport {
  taskId: string;
  outcome: TaskOutcome;
  status: string;
  version: number;
  detail: string;
  refund?: CallReport;
  note?: CallReport;
  /** X-Sandbox-Fault values this run injected into the task's calls. */
  faults: string[];
}

export interface RunSummary {
  reports: TaskReport[];
  totals: Record<TaskOutcome, number>;
}

/** Enough for the longest path (retries and a round trip through VALIDATING) with room; more is a loop. */
const MAX_STEPS = 40;
const MAX_VERSION_CONFLICTS = 5;

/** Statuses a resumed task can be in while this agent still has work on it. */
const resumableStatuses = ["RECEIVED", "PLANNING", "READY", "RUNNING", "WAITING_FOR_TOOL", "VALIDATING"] as const;

export class RefundAgent {
  constructor(private readonly options: RefundAgentOptions) {}

  /** Creates the task for `order` (idempotent on its id) and drives it as far as it goes. */
  async run(order: Order): Promise<TaskReport> {
    const taskId = taskIdOf(order);
    try {
      await this.options.client.createTask({
        workflow: "agent-task",
        taskId,
        intentId: intentIdOf(order),
        subtasks: refundSubtasksOf(order),
      });
    } catch (error) {
      // A task this agent created for the same order before its subtasks
      // named the amount: the same work, carried on rather than refused.
      if (!isVerityApiError(error, "idempotency_conflict") || !(await this.isTaskOf(taskId, order)))
        return this.errorReport(taskId, error);
    }
    return this.drive(taskId, order);
  }

  private async isTaskOf(taskId: string, order: Order): Promise<boolean> {
    const task = await this.options.client.getTask(taskId).catch(() => undefined);
    return task?.intent_id === intentIdOf(order) && task.workflow.name === "agent-task";
  }

  /** The ids of this agent's unfinished refund tasks (of one run, when `runId` is given). */
  async findResumable(runId?: string): Promise<string[]> {
    const ids: string[] = [];
    for (const status of resumableStatuses) {
      let cursor: string | undefined;
      do {
        const page = await this.options.client.listTasks({
          status,
          workflow: "agent-task",
          limit: 200,
          ...(cursor ? { cursor } : {}),
        });
        for (const t of page.items) {
          const order = orderOfIntent(t.intent_id);
          if (
            t.created_by === this.options.identity &&
            order &&
            (runId === undefined || order.orderId.startsWith(`${runId}-`))
          )
            ids.push(t.id);
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    }
    return ids;
  }

  /** Continues one task from its last committed state. */
  async resume(taskId: string): Promise<TaskReport> {
    try {
      const task = await this.options.client.getTask(taskId);
      const order = orderOfIntent(task.intent_id);
      if (!order) return report(task, "error", `intent ${task.intent_id} is not one of this agent's refunds`, [], []);
      return this.drive(taskId, order);
    } catch (error) {
      return this.errorReport(taskId, error);
    }
  }

  private async drive(taskId: string, order: Order): Promise<TaskReport> {
    const { client } = this.options;
    const faults = new FaultChooser(this.options.faults, this.options.faultRate, this.options.seed, taskId);
    const injected: string[] = [];
    let leased = false;
    try {
      return await client.withLease(
        taskId,
        (lease) => {
          leased = true;
          return this.steps(taskId, order, lease, faults, injected);
        },
        { ttlSeconds: this.options.leaseTtlSeconds, waitMs: this.options.leaseWaitMs ?? 0 },
      );
    } catch (error) {
      // Not leased at all: another worker is on it, which is no error of ours.
      if (!leased && isVerityApiError(error, "lease_conflict")) {
        const task = await client.getTask(taskId).catch(() => undefined);
        if (task) return report(task, "in_flight", `another worker holds the lease: ${error.detail}`, [], injected);
      }
      return this.errorReport(taskId, error, injected);
    }
  }

  private async steps(
    taskId: string,
    order: Order,
    lease: LeaseHandle,
    faults: FaultChooser,
    injected: string[],
  ): Promise<TaskReport> {
    const { client, identity } = this.options;
    let conflicts = 0;
    for (let i = 0; i < MAX_STEPS; i++) {
      if (lease.signal.aborted)
        throw new Error("the lease was lost (renewal refused); stopping before a fenced write is refused");
      const [task, executions, instructions] = await Promise.all([
        client.getTask(taskId),
        client.listExecutions(taskId),
        client.listInstructions(taskId),
      ]);
      const step = planNextStep(task, executions, identity, instructions.current.refund ?? null);
      if (step.kind === "stop") return report(task, step.outcome, step.detail, executions, injected);
      try {
        const lostLease = await this.apply(step, task, order, lease, faults, injected);
        if (lostLease) {
          const [now, ledger] = await Promise.all([client.getTask(taskId), client.listExecutions(taskId)]);
          return report(now, "in_flight", lostLease, ledger, injected);
        }
      } catch (error) {
        // Someone else moved the task (the reconciler, an operator): read it again and re-plan.
        if (isVerityApiError(error, "version_conflict") && ++conflicts <= MAX_VERSION_CONFLICTS) continue;
        throw error;
      }
    }
    throw new Error(`no end after ${MAX_STEPS} steps: the plan is looping`);
  }

  /** Carries out one step; returns why to stop when the outcome was recorded but this agent's lease had been taken over. */
  private async apply(
    step: Exclude<AgentStep, { kind: "stop" }>,
    task: Task,
    order: Order,
    lease: LeaseHandle,
    faults: FaultChooser,
    injected: string[],
  ): Promise<string | undefined> {
    const { client } = this.options;
    switch (step.kind) {
      case "transition":
        await client.transition(task.id, {
          expectedVersion: task.version,
          to: step.to,
          patch: step.patch,
          reason: step.reason,
          fencingToken: lease.fencingToken,
        });
        return;
      case "record_unknown": {
        const recorded = await client.recordOutcome(step.execution.id, {
          attempt_id: step.execution.attempt_id,
          outcome: "unknown",
          error: "the worker that sent this request stopped before recording its outcome",
          fencing_token: lease.fencingToken,
        });
        return recorded.lease_conflict
          ? `outcome recorded, but the lease was taken over: ${recorded.lease_conflict.detail}`
          : undefined;
      }
      case "tool": {
        const isRefund = step.toolCallId === REFUND_CALL;
        const result = await client.executeTool(
          {
            taskId: task.id,
            toolCallId: step.toolCallId,
            tool: isRefund ? "payments.refund" : "crm.add_note",
            request: isRefund ? refundRequestOf(order) : noteRequestOf(order),
            expectedVersion: task.version,
            fencingToken: lease.fencingToken,
            nextStatus: step.nextStatus,
            callTimeoutMs: this.options.callTimeoutMs,
            ...(step.instructionId ? { instructionId: step.instructionId } : {}),
          },
          (ctx) => {
            const fault = faults.draw();
            if (fault) injected.push(fault);
            return isRefund ? this.refund(ctx, order, fault) : this.addNote(ctx, order, fault);
          },
        );
        this.options.log(
          `  ${task.id} ${step.toolCallId}: ${result.kind} (${result.execution.status}, attempt ${result.execution.attempt})${result.kind === "blocked" ? `: ${result.detail}` : ""}`,
        );
        // The new holder moves the task on from this receipt (programs/agent/plan.ts); writing more here would only be refused.
        if ("leaseConflict" in result && result.leaseConflict)
          return `outcome recorded, but the lease was taken over: ${result.leaseConflict.detail}`;
        return;
      }
    }
  }

  private async refund(ctx: ToolCallContext, order: Order, fault: string | undefined): Promise<ToolOutcome> {
    const payments =
      this.options.payments?.(fault ? faultHeaderOf(fault) : undefined) ??
      new SandboxPaymentConnector({
        baseUrl: this.options.sandboxUrl,
        faults: fault ? [faultHeaderOf(fault)] : undefined,
        webhookUrl: this.options.webhookUrl,
      });
    const out = await payments.refund(
      {
        idempotencyKey: ctx.idempotencyKey,
        amountCents: order.amountCents,
        currency: order.currency,
        chargeId: order.chargeId,
        customerId: order.customerId,
        metadata: { executionId: ctx.executionId, taskId: ctx.taskId },
      },
      { timeoutMs: this.options.callTimeoutMs, signal: ctx.signal },
    );
    if (out.kind !== "succeeded") return notSucceeded(out);
    const r = out.refund;
    return {
      outcome: "succeeded",
      result: {
        refund_id: r.id,
        amount_cents: r.amountCents,
        currency: r.currency,
        charge_id: r.chargeId,
        customer_id: r.customerId,
        created_at: r.createdAt,
      },
      evidence: evidenceOf(out.evidence, r.id, r.metadata),
    };
  }

  private async addNote(ctx: ToolCallContext, order: Order, fault: string | undefined): Promise<ToolOutcome> {
    const crm = new SandboxCrmConnector({
      baseUrl: this.options.sandboxUrl,
      faults: fault ? [faultHeaderOf(fault)] : undefined,
    });
    const request = noteRequestOf(order);
    const out = await crm.addNote(
      {
        idempotencyKey: ctx.idempotencyKey,
        customerId: request.customer_id,
        text: request.text,
        metadata: { executionId: ctx.executionId, taskId: ctx.taskId },
      },
      { timeoutMs: this.options.callTimeoutMs, signal: ctx.signal },
    );
    if (out.kind !== "succeeded") return notSucceeded(out);
    return {
      outcome: "succeeded",
      result: { note_id: out.note.id, customer_id: out.note.customerId },
      evidence: evidenceOf(out.evidence, out.note.id, out.note.metadata),
    };
  }

  private async errorReport(taskId: string, error: unknown, injected: string[] = []): Promise<TaskReport> {
    const task = await this.options.client.getTask(taskId).catch(() => undefined);
    const executions = task ? await this.options.client.listExecutions(taskId).catch(() => []) : [];
    const detail = describeError(error);
    return task
      ? report(task, "error", detail, executions, injected)
      : { taskId, outcome: "error", status: "?", version: 0, detail, faults: injected };
  }
}

/** What the provider said, as proof: its request record plus the effect's id and metadata (which names the execution). */
function evidenceOf(
  evidence: ProviderEvidence,
  effectId: string,
  metadata: Record<string, string>,
): Record<string, unknown> {
  return { ...evidence, effect_id: effectId, metadata };
}

function notSucceeded(out: FailedOutcome | UnknownOutcome): ToolOutcome {
  const error = `${out.reason}: ${out.message}`;
  if (out.kind === "unknown") return { outcome: "unknown", error };
  return {
    outcome: "failed",
    error,
    retryable: out.retryable,
    result: { reason: out.reason, ...(out.httpStatus ? { http_status: out.httpStatus } : {}) },
  };
}

function callReport(e: Execution | undefined): CallReport | undefined {
  if (!e) return undefined;
  // The agent records refund_id / note_id; a reconciler records the provider's record (id).
  const result = (e.result ?? {}) as { refund_id?: unknown; note_id?: unknown; id?: unknown };
  const providerId = [result.refund_id, result.note_id, result.id].find((v): v is string => typeof v === "string");
  return { status: e.status, attempts: e.attempt, ...(providerId ? { providerId } : {}) };
}

function report(
  task: Task,
  outcome: TaskOutcome,
  detail: string,
  executions: readonly Execution[],
  faults: string[],
): TaskReport {
  return {
    taskId: task.id,
    outcome,
    status: task.status,
    version: task.version,
    detail,
    refund: callReport(executions.find((e) => e.tool_call_id === REFUND_CALL)),
    note: callReport(executions.find((e) => e.tool_call_id === NOTE_CALL)),
    faults,
  };
}

function describeError(error: unknown): string {
  if (error instanceof VerityApiError)
    return `${error.status} ${error.code}: ${error.detail}${error.violations.length ? ` [${error.violations.map((v) => v.invariant).join(", ")}]` : ""}`;
  if (error instanceof VerityNetworkError) return `Verity unreachable: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export function formatReport(r: TaskReport): string {
  const call = (name: string, c: CallReport | undefined) =>
    c
      ? ` ${name} ${c.status}${c.providerId ? ` ${c.providerId}` : ""}${c.attempts > 1 ? ` (${c.attempts} attempts)` : ""}`
      : "";
  const faults = r.faults.length ? ` faults=${r.faults.join(",")}` : "";
  return `${r.taskId.padEnd(34)} ${r.outcome.padEnd(11)} ${r.status}@v${r.version}${call("refund", r.refund)}${call("note", r.note)}${faults} — ${r.detail}`;
}

export function summarize(reports: TaskReport[]): RunSummary {
  const totals: Record<TaskOutcome, number> = {
    completed: 0,
    reconciling: 0,
    review: 0,
    failed: 0,
    cancelled: 0,
    in_flight: 0,
    error: 0,
  };
  for (const r of reports) totals[r.outcome]++;
  return { reports, totals };
}

export interface RunOptions {
  tasks: number;
  amountCents: number;
  currency: string;
  /** Prefix of this run's order ids; a rerun with the same prefix finds its tasks again (idempotent create). */
  runId: string;
  /** With resume: only this run's tasks (the CLI passes it when --run-id is given). */
  resumeRunId?: string;
  resume: boolean;
  concurrency: number;
}

/** The CLI's work: resume this agent's unfinished tasks, or create and run `tasks` new ones. */
export async function runRefundAgent(
  agent: RefundAgent,
  run: RunOptions,
  onReport: (r: TaskReport) => void,
): Promise<RunSummary> {
  const jobs: Array<() => Promise<TaskReport>> = run.resume
    ? (await agent.findResumable(run.resumeRunId)).map((id) => () => agent.resume(id))
    : Array.from(
        { length: run.tasks },
        (_, i) => () => agent.run(orderOf(`${run.runId}-${i + 1}`, run.amountCents, run.currency)),
      );
  const reports: TaskReport[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const r = await job();
      reports.push(r);
      onReport(r);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(run.concurrency, jobs.length)) }, worker));
  return summarize(reports);
}
