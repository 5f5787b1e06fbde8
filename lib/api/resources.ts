import { z } from "zod";
import type { TaskView, TransitionView } from "@/lib/engine/tasks";
import { GateNameSchema, TaskPatchSchema, TaskStateSchema } from "@/lib/engine/task-state";
import type { NextStep } from "@/lib/engine/transition-rules";
import type { ActorKind, WorkflowDefinition } from "@/lib/engine/workflow-definition";

/**
 * What the API sends: the wire shape of each resource as a zod schema, and
 * the function that builds it from the engine's view. The serializers are
 * typed by the schemas, so the OpenAPI document (lib/openapi.ts, generated
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
