import { z } from "zod";
import {
  executionMoves,
  retryCodes,
  type ExecutionStatus,
  type RetryAdvice,
} from "@/lib/model/executions/execution-rules";
import type { ExecutionView, listExecutionEvents } from "@/lib/stores/execution-store";
import type { IntentResult } from "@/lib/use-cases/executions/record-intent";
import type { OutcomeResult } from "@/lib/use-cases/executions/record-outcome";
import { InstructionGuardSchema, instructionGuardResource } from "@/lib/adapters/api/instruction-resources";
import { LeaseResourceSchema, leaseResource } from "@/lib/adapters/api/lease-resources";
import { TaskResourceSchema, taskResource, taskResourceFor } from "@/lib/adapters/api/task-resources";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { MaskedFieldsSchema } from "@/lib/adapters/api/task-resources";
import type { Db } from "@/lib/db/client";
import type { Principal } from "@/lib/model/permissions";
import {
  maskExecutionEventsForReader,
  maskExecutionForReader,
  maskExecutionsForReader,
} from "@/lib/use-cases/data-classes/mask-for-reader";

/** The wire shapes of the execution ledger: one tool call's attempts and events, and the answers to an intent and an outcome. */
export const ExecutionStatusSchema = z.enum(Object.keys(executionMoves) as [ExecutionStatus, ...ExecutionStatus[]]);

export const ExecutionResourceSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  tool_call_id: z
    .string()
    .meta({ description: "The logical call within the task, chosen by the agent; stable across retries and crashes." }),
  attempt: z.int().min(1),
  attempt_id: z
    .string()
    .meta({ description: "Send it with sent and outcome: a report from an older attempt is refused." }),
  idempotency_key: z.string().meta({
    description: "Send it to the provider: the same for every attempt of the call, so the effect happens at most once.",
  }),
  tool: z.string().meta({ description: "A built-in or registered tool (GET /api/v1/tools)." }),
  tool_version: z.int().nullable().meta({
    description:
      "The tool version the call was recorded under: its schema, irreversibility and reconciliation are that version's.",
  }),
  irreversible: z.boolean().meta({
    description:
      "The server's fact about the tool: an irreversible call whose outcome is unknown is never retried before reconciliation.",
  }),
  request: z.record(z.string(), z.unknown()),
  status: ExecutionStatusSchema,
  version: z.int(),
  result: z.unknown().meta({ description: "What the tool returned (the receipt), null until an outcome is recorded." }),
  evidence: z
    .unknown()
    .meta({ description: "The provider's proof of the outcome; for success it names this execution or its key." }),
  error: z.string().nullable(),
  created_by: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  sent_at: z.iso.datetime().nullable(),
  settled_at: z.iso.datetime().nullable(),
  instruction_id: z
    .string()
    .nullable()
    .meta({ description: "The task instruction this call relies on (see /tasks/{id}/instructions), if it named one." }),
  compensates_execution_id: z.string().nullable().meta({
    description:
      "Set on a compensation: the known-succeeded execution of the same task it undoes, through the compensating tool that execution's tool declares.",
  }),
  retry: z
    .object({
      safe: z.boolean().meta({
        description:
          "True: make a new attempt now, with the same tool_call_id (the same idempotency key); the provider applies the key at most once.",
      }),
      code: z.enum(retryCodes).meta({
        description:
          "never_sent / never_applied: the reconciler established that nothing happened (safe); retryable_failure: the provider said this request applied nothing and a retry may work (safe); " +
          "refused: the provider refused the request itself; not_stated: nobody said; attempt_limit: safe, but the tool's attempts are used up, so a person decides.",
      }),
      reason: z.string(),
      attempt: z.int().min(1).meta({ description: "The attempt that failed." }),
      max_attempts: z.int().min(1).meta({ description: "The tool's attempt limit." }),
    })
    .nullable()
    .meta({
      description:
        "Set when the execution is FAILED or RECONCILED_FAILED: whether a retry is safe now, and why. Null otherwise.",
    }),
  masked_fields: MaskedFieldsSchema,
});
export type ExecutionResource = z.infer<typeof ExecutionResourceSchema>;

export const ExecutionEventResourceSchema = z.object({
  id: z.string(),
  attempt_id: z.string(),
  from_status: ExecutionStatusSchema.nullable(),
  to_status: ExecutionStatusSchema,
  actor: z.string(),
  reason: z.string().nullable(),
  evidence: z.unknown(),
  created_at: z.iso.datetime(),
  masked_fields: MaskedFieldsSchema,
});
export type ExecutionEventResource = z.infer<typeof ExecutionEventResourceSchema>;

export const ExecutionDetailSchema = ExecutionResourceSchema.extend({
  events: z
    .array(ExecutionEventResourceSchema)
    .meta({ description: "Every status change of every attempt, oldest first." }),
});
export type ExecutionDetail = z.infer<typeof ExecutionDetailSchema>;

export const ExecutionListSchema = z.object({ items: z.array(ExecutionResourceSchema) });

export const IntentResultSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("proceed").meta({
      description:
        "Call the tool now, with execution.idempotency_key; report sent, then the outcome, with execution.attempt_id.",
    }),
    execution: ExecutionResourceSchema,
    task: TaskResourceSchema.meta({ description: "The task after the intent (WAITING_FOR_TOOL)." }),
  }),
  z.object({
    kind: z.literal("receipt").meta({
      description: "This call already succeeded: do not call the tool again; execution.result is its result.",
    }),
    execution: ExecutionResourceSchema,
    task: TaskResourceSchema.meta({ description: "The task as it is now." }),
  }),
  z.object({
    kind: z.literal("blocked").meta({
      description:
        "Not sent, and do not send it: the instruction it relies on is superseded or unauthorized, or the current instruction on its topic forbids it. " +
        "The execution is NEEDS_HUMAN, the task WAITING_FOR_HUMAN, and a review is open; a person approves (it is then sent under the same idempotency key) or rejects it.",
    }),
    execution: ExecutionResourceSchema,
    task: TaskResourceSchema.meta({ description: "The task as it is now (WAITING_FOR_HUMAN)." }),
    review_id: z.string(),
    detail: z.string().meta({ description: "Why, in words, naming both instructions." }),
    instructions: InstructionGuardSchema.nullable(),
  }),
]);
export type IntentResultResource = z.infer<typeof IntentResultSchema>;

export const OutcomeResultSchema = z.object({
  execution: ExecutionResourceSchema,
  task: TaskResourceSchema.meta({
    description:
      "The task after the outcome: RUNNING or VALIDATING after a success, RUNNING after a known failure, RECONCILING after an unknown outcome; " +
      "as it is (not moved) when lease_conflict is set.",
  }),
  lease_conflict: z
    .object({
      detail: z.string(),
      lease: LeaseResourceSchema.nullable().meta({
        description: "The task's lease now: the worker that took it over (or an expired lease); null if none.",
      }),
    })
    .nullable()
    .meta({
      description:
        "Null normally. Set when the outcome was recorded but the task was not moved because your fencing token is no longer the task's lease " +
        "(it expired and another worker took the task over): the provider's answer is kept as the execution's outcome, and the lease holder " +
        "continues from it (its intent for the same tool_call_id answers `receipt`). Stop working on the task.",
    }),
});
export type OutcomeResultResource = z.infer<typeof OutcomeResultSchema>;

export function executionResource(e: ExecutionView): ExecutionResource {
  return {
    id: e.id,
    task_id: e.taskId,
    tool_call_id: e.toolCallId,
    attempt: e.attempt,
    attempt_id: e.attemptId,
    idempotency_key: e.idempotencyKey,
    tool: e.tool,
    tool_version: e.toolVersion ?? null,
    irreversible: e.irreversible,
    request: e.request,
    status: e.status,
    version: e.version,
    result: e.result ?? null,
    evidence: e.evidence ?? null,
    error: e.error,
    created_by: e.createdBy,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    sent_at: e.sentAt?.toISOString() ?? null,
    settled_at: e.settledAt?.toISOString() ?? null,
    instruction_id: e.instructionId ?? null,
    compensates_execution_id: e.compensatesId ?? null,
    retry: retryResource(e.retry ?? null),
  };
}

function retryResource(r: RetryAdvice | null): ExecutionResource["retry"] {
  return r ? { safe: r.safe, code: r.code, reason: r.reason, attempt: r.attempt, max_attempts: r.maxAttempts } : null;
}

/** The intent route's answer; `task` is the task now when the engine did not return the one it moved. */
export function intentResultResource(result: IntentResult, taskNow: TaskView): IntentResultResource {
  const task = taskResource(result.kind !== "receipt" && result.task ? result.task : taskNow);
  if (result.kind === "blocked") {
    return {
      kind: "blocked",
      execution: executionResource(result.execution),
      task,
      review_id: result.reviewId,
      detail: result.message,
      instructions: instructionGuardResource(result.guard),
    };
  }
  return { kind: result.kind, execution: executionResource(result.execution), task };
}

/** The intent's answer as `principal` may see it: a receipt returns a call another worker may have made. */
export async function intentResultResourceFor(
  db: Db,
  principal: Principal,
  result: IntentResult,
  taskNow: TaskView,
): Promise<IntentResultResource> {
  const answer = intentResultResource(result, taskNow);
  const [execution] = await executionResourcesFor(db, principal, [result.execution]);
  const task = taskResourceFor(principal, result.kind !== "receipt" && result.task ? result.task : taskNow);
  return { ...answer, execution: execution ?? answer.execution, task };
}

type ExecutionEventRow = Awaited<ReturnType<typeof listExecutionEvents>>[number];

export function executionEventResource(ev: ExecutionEventRow): ExecutionEventResource {
  return {
    id: ev.id,
    attempt_id: ev.attemptId,
    from_status: ev.fromStatus,
    to_status: ev.toStatus,
    actor: ev.actor,
    reason: ev.reason,
    evidence: ev.evidence ?? null,
    created_at: ev.createdAt.toISOString(),
  };
}

export function executionDetailResource(e: ExecutionView, events: ExecutionEventRow[]): ExecutionDetail {
  return { ...executionResource(e), events: events.map(executionEventResource) };
}

/** One call with its events as `principal` may see them: restricted request, result and evidence fields masked without clearance. */
export async function executionDetailResourceFor(
  db: Db,
  principal: Principal,
  e: ExecutionView,
  events: ExecutionEventRow[],
): Promise<ExecutionDetail> {
  const execution = await maskExecutionForReader(db, principal, e);
  const masked = await maskExecutionEventsForReader(db, principal, e, events);
  return {
    ...executionResource(execution.value),
    masked_fields: execution.maskedFields,
    events: masked.map((ev) => ({ ...executionEventResource(ev.value), masked_fields: ev.maskedFields })),
  };
}

/** A task's ledger as `principal` may see it. */
export async function executionResourcesFor(
  db: Db,
  principal: Principal,
  executions: ExecutionView[],
): Promise<ExecutionResource[]> {
  const masked = await maskExecutionsForReader(db, principal, executions);
  return masked.map((m) => ({ ...executionResource(m.value), masked_fields: m.maskedFields }));
}

/** `task` is the task after the outcome, or as it is when the outcome did not move it. */
export function outcomeResultResource(result: OutcomeResult, task: TaskView): OutcomeResultResource {
  const conflict = result.leaseConflict;
  return {
    execution: executionResource(result.execution),
    task: taskResource(task),
    lease_conflict: conflict
      ? { detail: conflict.message, lease: conflict.lease ? leaseResource(conflict.lease) : null }
      : null,
  };
}

/** The outcome's answer as `principal` may see it. */
export async function outcomeResultResourceFor(
  db: Db,
  principal: Principal,
  result: OutcomeResult,
  task: TaskView,
): Promise<OutcomeResultResource> {
  const [execution] = await executionResourcesFor(db, principal, [result.execution]);
  const answer = outcomeResultResource(result, task);
  return { ...answer, execution: execution ?? answer.execution, task: taskResourceFor(principal, task) };
}
