import { z } from "zod";
import { executionMoves, retryCodes, type ExecutionStatus, type RetryAdvice } from "@/lib/model/executions/execution-rules";
import type { ExecutionView, IntentResult, listExecutionEvents, OutcomeResult } from "@/lib/use-cases/executions/executions";
import { InstructionGuardSchema, instructionGuardResource } from "@/lib/adapters/api/instruction-resources";
import type { LeaseView } from "@/lib/stores/leases";
import type { TaskView, TransitionView } from "@/lib/stores/tasks/task-views";
import { toolNames } from "@/lib/model/executions/tools";
import { GateNameSchema, TaskPatchSchema, TaskStateSchema } from "@/lib/model/tasks/task-state";
import type { NextStep } from "@/lib/model/tasks/transition-rules";
import type { ActorKind, WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

/**
 * What the API sends: the wire shape of each resource as a zod schema, and
 * the function that builds it from the engine's view. The serializers are
 * typed by the schemas, so the OpenAPI document (lib/adapters/openapi/openapi.ts, generated
 * from these schemas) cannot drift from what the routes return. Names are
 * snake_case like TaskState itself; times are ISO 8601 strings.
 */
export const ActorKindSchema = z.enum(["agent", "user", "system"]) satisfies z.ZodType<ActorKind>;

export const FieldErrorSchema = z.object({
  field: z.string().meta({ description: 'JSON path of the offending member, "" for the whole body, or a header name.' }),
  message: z.string(),
});
export const InvariantViolationSchema = z.object({
  invariant: z.string().meta({ description: "Stable name of the invariant, e.g. terminal_state_is_final." }),
  message: z.string(),
});

export const TaskResourceSchema = z.object({
  id: z.string(),
  workflow: z.object({ name: z.string(), version: z.int(), digest: z.string() }),
  status: z.string(),
  version: z.int().min(1).meta({ description: "Compare-and-swap target; also the ETag." }),
  state: TaskStateSchema,
  intent_id: z.string(),
  created_at: z.iso.datetime(),
  created_by: z.string(),
  updated_at: z.iso.datetime(),
  updated_by: z.string(),
});
export type TaskResource = z.infer<typeof TaskResourceSchema>;

export const TransitionResourceSchema = z.object({
  id: z.string().meta({ description: "The transition_id: retrying with it replays this record." }),
  task_id: z.string(),
  from_version: z.int().nullable().meta({ description: "Null for the creation record." }),
  to_version: z.int(),
  from_status: z.string().nullable(),
  to_status: z.string(),
  actor: z.string().meta({ description: "Identity (SPIFFE ID) of who made the change." }),
  actor_kind: ActorKindSchema,
  reason: z.string().nullable(),
  patch: TaskPatchSchema,
  created_at: z.iso.datetime(),
});
export type TransitionResource = z.infer<typeof TransitionResourceSchema>;

export const TaskPageSchema = z.object({
  items: z.array(TaskResourceSchema),
  next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last page." }),
});

export const TransitionPageSchema = z.object({
  items: z.array(TransitionResourceSchema),
  next_after_version: z.int().nullable().meta({ description: "Pass as `after_version` for the next page; null on the last page." }),
});

export const TransitionResultSchema = z.object({
  task: TaskResourceSchema,
  transition: TransitionResourceSchema,
  replayed: z.boolean().meta({ description: "True when this transition_id was already applied: nothing was written, the first result is returned." }),
});

const GuardSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("gates_true"), gates: z.array(GateNameSchema) }),
  z.object({ kind: z.literal("mandatory_subtasks_completed") }),
]);

export const NextStepsSchema = z.object({
  task_id: z.string(),
  status: z.string(),
  version: z.int(),
  terminal: z.boolean(),
  steps: z.array(
    z.object({
      to: z.string(),
      description: z.string(),
      allowed: z.boolean().meta({ description: "True when the transition would be accepted now, with an empty patch." }),
      blocked_by: z.array(InvariantViolationSchema),
      guards: z.array(GuardSchema),
    }),
  ),
});

export const WorkflowResourceSchema = z.object({
  name: z.string(),
  version: z.int(),
  title: z.string(),
  description: z.string(),
  digest: z.string().meta({ description: "sha256 of the canonical definition; pinned on every task as workflow_digest." }),
  initial: z.string(),
  states: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      terminal: z.boolean(),
      success: z.boolean(),
      requires_gates: z.array(GateNameSchema),
    }),
  ),
  edges: z.array(z.object({ from: z.string(), to: z.string(), by: z.array(ActorKindSchema), description: z.string(), guards: z.array(GuardSchema) })),
  rejections: z.array(z.object({ from: z.string(), to: z.string(), invariant: z.string(), message: z.string() })),
});
export type WorkflowResource = z.infer<typeof WorkflowResourceSchema>;

export const WorkflowListSchema = z.object({ items: z.array(WorkflowResourceSchema) });

export const ExecutionStatusSchema = z.enum(Object.keys(executionMoves) as [ExecutionStatus, ...ExecutionStatus[]]);

export const ExecutionResourceSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  tool_call_id: z.string().meta({ description: "The logical call within the task, chosen by the agent; stable across retries and crashes." }),
  attempt: z.int().min(1),
  attempt_id: z.string().meta({ description: "Send it with sent and outcome: a report from an older attempt is refused." }),
  idempotency_key: z.string().meta({ description: "Send it to the provider: the same for every attempt of the call, so the effect happens at most once." }),
  tool: z.enum(toolNames),
  irreversible: z.boolean().meta({ description: "The server's fact about the tool: an irreversible call whose outcome is unknown is never retried before reconciliation." }),
  request: z.record(z.string(), z.unknown()),
  status: ExecutionStatusSchema,
  version: z.int(),
  result: z.unknown().meta({ description: "What the tool returned (the receipt), null until an outcome is recorded." }),
  evidence: z.unknown().meta({ description: "The provider's proof of the outcome; for success it names this execution or its key." }),
  error: z.string().nullable(),
  created_by: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  sent_at: z.iso.datetime().nullable(),
  settled_at: z.iso.datetime().nullable(),
  instruction_id: z.string().nullable().meta({ description: "The task instruction this call relies on (see /tasks/{id}/instructions), if it named one." }),
  retry: z
    .object({
      safe: z.boolean().meta({ description: "True: make a new attempt now, with the same tool_call_id (the same idempotency key); the provider applies the key at most once." }),
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
    .meta({ description: "Set when the execution is FAILED or RECONCILED_FAILED: whether a retry is safe now, and why. Null otherwise." }),
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
});
export type ExecutionEventResource = z.infer<typeof ExecutionEventResourceSchema>;

export const ExecutionDetailSchema = ExecutionResourceSchema.extend({
  events: z.array(ExecutionEventResourceSchema).meta({ description: "Every status change of every attempt, oldest first." }),
});
export type ExecutionDetail = z.infer<typeof ExecutionDetailSchema>;

export const ExecutionListSchema = z.object({ items: z.array(ExecutionResourceSchema) });

export const IntentResultSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("proceed").meta({ description: "Call the tool now, with execution.idempotency_key; report sent, then the outcome, with execution.attempt_id." }),
    execution: ExecutionResourceSchema,
    task: TaskResourceSchema.meta({ description: "The task after the intent (WAITING_FOR_TOOL)." }),
  }),
  z.object({
    kind: z.literal("receipt").meta({ description: "This call already succeeded: do not call the tool again; execution.result is its result." }),
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

export const LeaseResourceSchema = z.object({
  task_id: z.string(),
  lease_id: z.string().meta({ description: "This acquisition's id: one worker process's lease. Another acquire, by the same identity too, gets another id and a greater token." }),
  holder: z.string().meta({ description: "Identity of the worker holding it." }),
  fencing_token: z.string().regex(/^[0-9]+$/).meta({ description: "Send it with every write (Fencing-Token header or fencing_token): a newer holder's token makes this one stale." }),
  expires_at: z.iso.datetime(),
  acquired_at: z.iso.datetime(),
  renewed_at: z.iso.datetime(),
  active: z.boolean().meta({ description: "expires_at is still in the future (as the server saw it when answering)." }),
});
export type LeaseResource = z.infer<typeof LeaseResourceSchema>;

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
      lease: LeaseResourceSchema.nullable().meta({ description: "The task's lease now: the worker that took it over (or an expired lease); null if none." }),
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

export const LeaseStateSchema = z.object({
  task_id: z.string(),
  lease: LeaseResourceSchema.nullable().meta({ description: "The task's latest lease, live or expired; null if it was never leased." }),
});

export const EventReceiptSchema = z.object({
  event_id: z.string(),
  duplicate: z.boolean().meta({ description: "True when this event id was received before: nothing was applied now; `result` is the first receipt's." }),
  result: z.unknown().meta({ description: "What receiving the event did, as recorded the first time." }),
});

export const ProblemSchema = z.looseObject({
  type: z.url(),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.array(FieldErrorSchema).optional().meta({ description: "400: each offending field." }),
  violations: z.array(InvariantViolationSchema).optional().meta({ description: "422 (and 403 for an edge the actor may not take): each broken invariant." }),
  current_version: z.int().optional().meta({ description: "409 version-conflict: the version to read and retry from." }),
  current_status: z.string().optional(),
  execution_id: z.string().optional().meta({ description: "422 unknown_outcome_reconciled_before_retry: the execution whose outcome is not known yet." }),
  holder: z.string().optional().meta({ description: "409 lease-conflict on acquire: who holds the lease." }),
  expires_at: z.string().optional().meta({ description: "409 lease-conflict on acquire: until when." }),
  permission: z.string().optional(),
  max_bytes: z.int().optional(),
  request_id: z.string().optional().meta({ description: "500: quote it when reporting; the cause is in the server log." }),
});

export function taskResource(task: TaskView): TaskResource {
  return {
    id: task.id,
    workflow: task.workflow,
    status: task.status,
    version: task.version,
    state: task.state,
    intent_id: task.intentId,
    created_at: task.createdAt.toISOString(),
    created_by: task.createdBy,
    updated_at: task.updatedAt.toISOString(),
    updated_by: task.updatedBy,
  };
}

export function transitionResource(t: TransitionView): TransitionResource {
  return {
    id: t.id,
    task_id: t.taskId,
    from_version: t.fromVersion,
    to_version: t.toVersion,
    from_status: t.fromStatus,
    to_status: t.toStatus,
    actor: t.actor,
    actor_kind: t.actorKind,
    reason: t.reason,
    patch: t.patch,
    created_at: t.createdAt.toISOString(),
  };
}

export function executionResource(e: ExecutionView): ExecutionResource {
  return {
    id: e.id,
    task_id: e.taskId,
    tool_call_id: e.toolCallId,
    attempt: e.attempt,
    attempt_id: e.attemptId,
    idempotency_key: e.idempotencyKey,
    tool: e.tool as ExecutionResource["tool"],
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
    return { kind: "blocked", execution: executionResource(result.execution), task, review_id: result.reviewId, detail: result.message, instructions: instructionGuardResource(result.guard) };
  }
  return { kind: result.kind, execution: executionResource(result.execution), task };
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

export function leaseResource(lease: LeaseView, now = new Date()): LeaseResource {
  return {
    task_id: lease.taskId,
    lease_id: lease.leaseId,
    holder: lease.holder,
    fencing_token: lease.fencingToken,
    expires_at: lease.expiresAt.toISOString(),
    acquired_at: lease.acquiredAt.toISOString(),
    renewed_at: lease.renewedAt.toISOString(),
    active: lease.expiresAt.getTime() > now.getTime(),
  };
}

/** `task` is the task after the outcome, or as it is when the outcome did not move it. */
export function outcomeResultResource(result: OutcomeResult, task: TaskView): OutcomeResultResource {
  const conflict = result.leaseConflict;
  return {
    execution: executionResource(result.execution),
    task: taskResource(task),
    lease_conflict: conflict ? { detail: conflict.message, lease: conflict.lease ? leaseResource(conflict.lease) : null } : null,
  };
}

export function nextStepsResource(task: TaskView, def: WorkflowDefinition, steps: NextStep[]): z.infer<typeof NextStepsSchema> {
  return {
    task_id: task.id,
    status: task.status,
    version: task.version,
    terminal: def.states[task.status]?.terminal === true,
    steps: steps.map((s) => ({
      to: s.edge.to,
      description: s.edge.description,
      allowed: s.blockedBy.length === 0,
      blocked_by: s.blockedBy,
      guards: s.edge.guards ?? [],
    })),
  };
}

export function workflowResource(def: WorkflowDefinition): WorkflowResource {
  return {
    name: def.name,
    version: def.version,
    title: def.title,
    description: def.description,
    digest: def.digest,
    initial: def.initial,
    states: Object.entries(def.states).map(([name, s]) => ({
      name,
      description: s.description,
      terminal: s.terminal === true,
      success: s.success === true,
      requires_gates: s.requiresGates ?? [],
    })),
    edges: def.edges.map((e) => ({ from: e.from, to: e.to, by: e.by, description: e.description, guards: e.guards ?? [] })),
    rejections: def.rejections.map((r) => ({ from: r.from, to: r.to, invariant: r.invariant, message: r.message })),
  };
}
