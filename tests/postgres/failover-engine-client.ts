import { leaseResource } from "@/lib/adapters/api/lease-resources";
import { executionResource } from "@/lib/adapters/api/execution-resources";
import { taskResource, transitionResource } from "@/lib/adapters/api/task-resources";
import type { Db } from "@/lib/db/client";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { listExecutions } from "@/lib/stores/execution-store";
import { getInstructionLedger } from "@/lib/stores/instructions";
import { instructionLedgerResource } from "@/lib/adapters/api/instruction-resources";
import { acquireLease, releaseLease, renewLease } from "@/lib/stores/leases";
import { listTasks } from "@/lib/use-cases/tasks/list-tasks";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import {
  VerityClient,
  type CreateTaskInput,
  type ExecutionLedger,
  type ListTasksQuery,
  type RecordIntentBody,
  type RecordOutcomeBody,
  type TransitionInput,
} from "@/sdk";
import { api, engineLedger } from "@/tests/sdk/engine-ledger";

/**
 * The SDK's client with its transport replaced by the engine on one
 * database, in-process: every method the refund agent (programs/agent) calls
 * runs the same engine function, resource serializer and problem mapping as
 * its /api/v1 route, so the unmodified agent drives tasks on the primary and
 * then on the standby without a Next server per region. Methods the agent
 * does not call are not overridden and would try HTTP to nowhere.
 *
 * Each request body is built exactly as VerityClient builds it (task_id and
 * transition_id fixed by the caller or generated once), so createTask of a
 * task that exists with the same body is the engine's idempotent replay.
 */
export class EngineBackedClient extends VerityClient {
  private readonly ledger: ExecutionLedger;

  /**
   * `provider`: the payment provider and CRM the engine itself asks (a
   * success report's confirmation, lib/use-cases/reconciliation/confirm-at-provider.ts):
   * the same sandbox the agent calls, as a deployment's server and its
   * workers share one provider.
   */
  constructor(
    private readonly db: Db,
    private readonly actor: Actor,
    options: { callTimeoutMs: number; provider: ConnectorDeps },
  ) {
    super({ baseUrl: "engine://in-process", token: "unused", callTimeoutMs: options.callTimeoutMs });
    this.ledger = engineLedger(db, actor, { deps: options.provider });
  }

  override createTask(input: CreateTaskInput) {
    const body = {
      workflow: input.workflow,
      task_id: input.taskId ?? `task-${crypto.randomUUID()}`,
      intent_id: input.intentId,
      ...(input.subtasks ? { subtasks: input.subtasks } : {}),
      ...(input.budget ? { budget: input.budget } : {}),
      ...(input.activeAgents ? { active_agents: input.activeAgents } : {}),
    };
    return api(async () => taskResource((await createTask(this.db, body, this.actor)).task));
  }

  override getTask(taskId: string) {
    return api(async () => taskResource(await getTaskOrThrow(this.db, taskId)));
  }

  override listTasks(query: ListTasksQuery = {}) {
    return api(async () => {
      const page = await listTasks(this.db, query);
      return { items: page.items.map(taskResource), next_cursor: page.nextCursor };
    });
  }

  override transition(taskId: string, input: TransitionInput) {
    const body = {
      expected_version: input.expectedVersion,
      transition_id: input.transitionId ?? `tr-${crypto.randomUUID()}`,
      ...(input.to !== undefined ? { to: input.to } : {}),
      ...(input.patch ? { patch: input.patch } : {}),
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
      ...(input.fencingToken ? { fencing_token: input.fencingToken } : {}),
    };
    return api(async () => {
      const result = await transitionTask(this.db, taskId, body, this.actor);
      return {
        task: taskResource(result.task),
        transition: transitionResource(result.transition),
        replayed: result.replayed,
      };
    });
  }

  override acquireLease(taskId: string, options: { ttlSeconds?: number } = {}) {
    return api(async () =>
      leaseResource(
        await acquireLease(
          this.db,
          taskId,
          options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds },
          this.actor,
        ),
      ),
    );
  }

  override renewLease(taskId: string, fencingToken: string, options: { ttlSeconds?: number } = {}) {
    return api(async () =>
      leaseResource(
        await renewLease(
          this.db,
          taskId,
          fencingToken,
          options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds },
          this.actor,
        ),
      ),
    );
  }

  override releaseLease(taskId: string, fencingToken: string) {
    return api(() => releaseLease(this.db, taskId, fencingToken, this.actor));
  }

  override listExecutions(taskId: string) {
    return api(async () => (await listExecutions(this.db, taskId)).map(executionResource));
  }

  override listInstructions(taskId: string) {
    return api(async () => {
      await getTaskOrThrow(this.db, taskId);
      return instructionLedgerResource(await getInstructionLedger(this.db, taskId));
    });
  }

  override recordIntent(taskId: string, body: RecordIntentBody) {
    return this.ledger.recordIntent(taskId, body);
  }

  override markSent(executionId: string, attemptId: string, fencingToken?: string) {
    return this.ledger.markSent(executionId, attemptId, fencingToken);
  }

  override recordOutcome(executionId: string, body: RecordOutcomeBody) {
    return this.ledger.recordOutcome(executionId, body);
  }

  override getExecution(executionId: string) {
    return this.ledger.getExecution(executionId);
  }
}
