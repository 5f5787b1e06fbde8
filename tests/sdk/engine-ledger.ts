import { leaseResource } from "@/lib/adapters/api/lease-resources";
import {
  executionDetailResource,
  executionResource,
  intentResultResource,
  outcomeResultResource,
} from "@/lib/adapters/api/execution-resources";
import { taskResource } from "@/lib/adapters/api/task-resources";
import type { Db } from "@/lib/db/client";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { getExecution, listExecutionEvents } from "@/lib/stores/execution-store";
import { acquireLease, releaseLease, renewLease } from "@/lib/stores/leases";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import type { Actor } from "@/lib/model/actor";
import { AppError } from "@/lib/core/errors";
import { problemFromAppError } from "@/lib/adapters/http/problem";
import { VerityApiError, type ExecutionLedger } from "@/sdk";
import type { LeaseApi } from "@/sdk/lease";

/** An engine call answered as the route would: an AppError becomes the VerityApiError of its problem+json. */
export async function api<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) throw new VerityApiError(problemFromAppError(error));
    throw error;
  }
}

/**
 * The SDK's ledger port served in-process by the real engine on a test
 * database: the same functions, serializers and problem mapping the
 * /api/v1 routes use, without a Next server. Not a fake: every rule the
 * protocol depends on is the engine's own. `deps`: the provider a success
 * reported after a recorded failure is checked against (the route uses the
 * configured one).
 */
export function engineLedger(db: Db, actor: Actor, options: { deps?: ConnectorDeps } = {}): ExecutionLedger {
  return {
    recordIntent: (taskId, body) =>
      api(async () => {
        const result = await recordIntent(db, taskId, body, actor);
        return intentResultResource(result, await getTaskOrThrow(db, taskId));
      }),
    markSent: (executionId, attemptId, fencingToken) =>
      api(async () =>
        executionResource(
          await markSent(
            db,
            executionId,
            { attempt_id: attemptId, ...(fencingToken ? { fencing_token: fencingToken } : {}) },
            actor,
          ),
        ),
      ),
    recordOutcome: (executionId, body) =>
      api(async () => {
        const result = await recordOutcome(db, executionId, body, actor, options.deps);
        return outcomeResultResource(result, result.task ?? (await getTaskOrThrow(db, result.execution.taskId)));
      }),
    getExecution: (executionId) =>
      api(async () => {
        const execution = await getExecution(db, executionId);
        if (!execution) throw new AppError("not_found", `Execution ${executionId} does not exist.`);
        return executionDetailResource(execution, await listExecutionEvents(db, executionId));
      }),
    getTask: (taskId) => api(async () => taskResource(await getTaskOrThrow(db, taskId))),
  };
}

/** The SDK's lease port (withLease's) served in-process by the engine, with the routes' serializer and problem mapping. */
export function engineLeases(db: Db, actor: Actor): LeaseApi {
  const ttl = (options: { ttlSeconds?: number } = {}) =>
    options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds };
  return {
    acquireLease: (taskId, options) =>
      api(async () => leaseResource(await acquireLease(db, taskId, ttl(options), actor))),
    renewLease: (taskId, token, options) =>
      api(async () => leaseResource(await renewLease(db, taskId, token, ttl(options), actor))),
    releaseLease: (taskId, token) => api(() => releaseLease(db, taskId, token, actor)),
  };
}
