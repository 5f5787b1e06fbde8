import { isVerityApiError, type Execution, type LeaseHandle, type Task, type VerityClient } from "@/sdk";
import {
  DELIVERY_WORKFLOW,
  planDeliveryStep,
  RELEASE_CALL,
  RELEASE_TOOL,
  releaseRequestOf,
  ROLLBACK_TOOL,
  type Change,
  type DeliveryOutcome,
  type DeliveryStep,
} from "@/programs/agent/delivery/plan";
import { deploy, rollBack, type ReleaseServiceOptions } from "@/programs/agent/delivery/release-service";

/**
 * The demo coding agent (`npm run agent -- --scenario delivery`): per change,
 * a task of the registered software-delivery workflow, driven under a lease
 * as far as the people who must decide let it: it writes the plan and stops
 * until an operator approves it in the console, implements, reviews and
 * tests, stops again until an engineer approves security and an operator the
 * deployment, then releases through deploy.release, a registered
 * irreversible tool whose outcome, when it is not known, Verity settles by
 * asking the tool's workers (this process runs one: lookup-worker in
 * scripts/agent.ts). Killed anywhere and run again, it continues from the
 * task and its ledger and never deploys twice.
 */
export interface DeliveryAgentOptions {
  client: VerityClient;
  releaseService: ReleaseServiceOptions;
  /** The SPIFFE id of the agent's token: whose tasks `findResumable` continues. */
  identity: string;
  leaseTtlSeconds: number;
  leaseWaitMs: number;
  log: (line: string) => void;
}

export interface DeliveryReport {
  taskId: string;
  outcome: DeliveryOutcome;
  status: string;
  version: number;
  detail: string;
  release?: { status: string; attempts: number };
}

const MAX_STEPS = 20;
const MAX_VERSION_CONFLICTS = 5;
const INTENT_PREFIX = "change:";

export function deliveryTaskIdOf(change: Change): string {
  return `delivery-${change.id}`;
}

/** The change is written into the task's intent id, so a resumed agent knows what it was releasing. */
export function intentIdOfChange(change: Change): string {
  return `${INTENT_PREFIX}${change.id}:${change.service}:${change.version}:${change.commit}:${change.environment}`;
}

export function changeOfIntent(intentId: string): Change | undefined {
  if (!intentId.startsWith(INTENT_PREFIX)) return undefined;
  const [id, service, version, commit, environment] = intentId.slice(INTENT_PREFIX.length).split(":");
  if (!id || !service || !version || !commit || (environment !== "staging" && environment !== "production"))
    return undefined;
  return { id, service, version, commit, environment, summary: `release ${service} ${version}` };
}

const services = ["checkout", "billing", "search", "notifications"];

/** The changes of a run: deterministic from the run id, so a rerun reuses its tasks. */
export function changesOf(runId: string, count: number): Change[] {
  return Array.from({ length: count }, (_, i) => {
    const service = services[i % services.length] ?? "checkout";
    const hex = Array.from(`${runId}-${i}`)
      .reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7)
      .toString(16)
      .padStart(8, "0");
    return {
      id: `${runId}-${i + 1}`,
      service,
      version: `1.${i + 1}.0`,
      commit: `${hex}abc`.slice(0, 11),
      environment: i % 2 === 0 ? "production" : "staging",
      summary: `ship ${service} 1.${i + 1}.0`,
    };
  });
}

export class DeliveryAgent {
  constructor(private readonly options: DeliveryAgentOptions) {}

  async run(change: Change): Promise<DeliveryReport> {
    const taskId = deliveryTaskIdOf(change);
    try {
      await this.options.client.createTask({ workflow: DELIVERY_WORKFLOW, taskId, intentId: intentIdOfChange(change) });
    } catch (error) {
      return errorReport(taskId, error);
    }
    return this.drive(taskId, change);
  }

  /** This agent's unfinished delivery tasks (of one run, when given). */
  async findResumable(runId?: string): Promise<Array<{ taskId: string; change: Change }>> {
    const found: Array<{ taskId: string; change: Change }> = [];
    let cursor: string | undefined;
    do {
      const page = await this.options.client.listTasks({ workflow: DELIVERY_WORKFLOW, limit: 100, cursor });
      for (const task of page.items) {
        const change = changeOfIntent(task.intent_id);
        if (!change || task.created_by !== this.options.identity) continue;
        if (runId && !change.id.startsWith(`${runId}-`)) continue;
        if (["complete", "rolled_back", "failed", "cancelled"].includes(task.status)) continue;
        found.push({ taskId: task.id, change });
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return found;
  }

  async drive(taskId: string, change: Change): Promise<DeliveryReport> {
    const { client } = this.options;
    let leased = false;
    try {
      return await client.withLease(
        taskId,
        (lease) => {
          leased = true;
          return this.steps(taskId, change, lease);
        },
        { ttlSeconds: this.options.leaseTtlSeconds, waitMs: this.options.leaseWaitMs },
      );
    } catch (error) {
      if (!leased && isVerityApiError(error, "lease_conflict")) {
        const task = await client.getTask(taskId).catch(() => undefined);
        if (task) return report(task, [], "in_flight", `another worker holds the lease: ${error.detail}`);
      }
      return errorReport(taskId, error);
    }
  }

  private async steps(taskId: string, change: Change, lease: LeaseHandle): Promise<DeliveryReport> {
    const { client } = this.options;
    let conflicts = 0;
    for (let i = 0; i < MAX_STEPS; i++) {
      if (lease.signal.aborted) throw new Error("the lease was lost (renewal refused); stopping");
      const [task, executions] = await Promise.all([client.getTask(taskId), client.listExecutions(taskId)]);
      const step = planDeliveryStep(task, executions, change);
      if (step.kind === "stop") return report(task, executions, step.outcome, step.detail);
      try {
        await this.apply(step, task, change, lease);
      } catch (error) {
        if (isVerityApiError(error, "version_conflict") && ++conflicts <= MAX_VERSION_CONFLICTS) continue;
        throw error;
      }
    }
    throw new Error(`no end after ${MAX_STEPS} steps: the plan is looping`);
  }

  private async apply(
    step: Exclude<DeliveryStep, { kind: "stop" }>,
    task: Task,
    change: Change,
    lease: LeaseHandle,
  ): Promise<void> {
    const { client, log } = this.options;
    switch (step.kind) {
      case "transition":
        await client.transition(task.id, {
          expectedVersion: task.version,
          ...(step.to ? { to: step.to } : {}),
          ...(step.patch ? { patch: step.patch } : {}),
          reason: step.reason,
          fencingToken: lease.fencingToken,
        });
        log(`  ${task.id}: ${step.to ? `${task.status} → ${step.to}` : `${task.status} (updated)`}: ${step.reason}`);
        return;
      case "record_unknown":
        await client.recordOutcome(step.execution.id, {
          attempt_id: step.execution.attempt_id,
          outcome: "unknown",
          error: "the worker that sent this release stopped before it heard back",
          fencing_token: lease.fencingToken,
        });
        return;
      case "release": {
        const result = await client.executeTool(
          {
            taskId: task.id,
            toolCallId: RELEASE_CALL,
            tool: RELEASE_TOOL,
            request: releaseRequestOf(change),
            expectedVersion: task.version,
            fencingToken: lease.fencingToken,
            callTimeoutMs: this.options.releaseService.timeoutMs,
          },
          (ctx) =>
            deploy(
              this.options.releaseService,
              ctx.idempotencyKey,
              releaseRequestOf(change),
              { execution_id: ctx.executionId, task_id: ctx.taskId },
              ctx.signal,
            ),
        );
        log(`  ${task.id} ${RELEASE_CALL}: ${result.kind} (${result.execution.status})`);
        return;
      }
      case "rollback": {
        // The call a person recorded: sent exactly as recorded (its tool_call_id, request and link), under its own key.
        const request = step.execution.request as Record<string, string>;
        const result = await client.executeTool(
          {
            taskId: task.id,
            toolCallId: step.execution.tool_call_id,
            tool: ROLLBACK_TOOL,
            request,
            expectedVersion: task.version,
            fencingToken: lease.fencingToken,
            callTimeoutMs: this.options.releaseService.timeoutMs,
            ...(step.execution.compensates_execution_id
              ? { compensatesExecutionId: step.execution.compensates_execution_id }
              : {}),
          },
          (ctx) =>
            rollBack(
              this.options.releaseService,
              ctx.idempotencyKey,
              request,
              { execution_id: ctx.executionId, task_id: ctx.taskId },
              ctx.signal,
            ),
        );
        log(`  ${task.id} ${step.execution.tool_call_id}: ${result.kind} (${result.execution.status})`);
        return;
      }
    }
  }
}

function report(
  task: Task,
  executions: readonly Execution[],
  outcome: DeliveryOutcome,
  detail: string,
): DeliveryReport {
  const release = executions.find((e) => e.tool_call_id === RELEASE_CALL);
  return {
    taskId: task.id,
    outcome,
    status: task.status,
    version: task.version,
    detail,
    ...(release ? { release: { status: release.status, attempts: release.attempt } } : {}),
  };
}

function errorReport(taskId: string, error: unknown): DeliveryReport {
  return {
    taskId,
    outcome: "error",
    status: "?",
    version: 0,
    detail: error instanceof Error ? error.message : String(error),
  };
}

export function formatDeliveryReport(r: DeliveryReport): string {
  const release = r.release ? `, release ${r.release.status}` : "";
  return `${r.taskId}: ${r.outcome} (${r.status} v${r.version}${release}): ${r.detail}`;
}
