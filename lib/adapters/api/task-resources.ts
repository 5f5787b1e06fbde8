import { z } from "zod";
import { ActorKindSchema, GuardSchema, InvariantViolationSchema } from "@/lib/adapters/api/shared-resources";
import type { TaskView, TransitionView } from "@/lib/stores/tasks/task-views";
import { TaskPatchSchema, TaskStateSchema } from "@/lib/model/tasks/task-state";
import type { NextStep } from "@/lib/model/tasks/transition-rules";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { Principal } from "@/lib/model/permissions";
import { maskTaskForReader, maskTransitionForReader } from "@/lib/use-cases/data-classes/mask-for-reader";

/** Set on every read: the pointers whose restricted values read "[restricted]" because the caller has no clearance. */
export const MaskedFieldsSchema = z.array(z.string()).optional().meta({
  description:
    'JSON pointers into this resource whose restricted values (docs/encryption.md "Data classes") were replaced by "[restricted]": the caller has no clearance (data:restricted, or an agent token\'s read_restricted scope). Empty when nothing was masked.',
});

/** The wire shapes of a task, its transitions and its next steps (snake_case, like TaskState itself). */
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
  masked_fields: MaskedFieldsSchema,
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
  masked_fields: MaskedFieldsSchema,
});
export type TransitionResource = z.infer<typeof TransitionResourceSchema>;

export const TaskPageSchema = z.object({
  items: z.array(TaskResourceSchema),
  next_cursor: z
    .string()
    .nullable()
    .meta({ description: "Pass as `cursor` for the next page; null on the last page." }),
});

export const TransitionPageSchema = z.object({
  items: z.array(TransitionResourceSchema),
  next_after_version: z
    .int()
    .nullable()
    .meta({ description: "Pass as `after_version` for the next page; null on the last page." }),
});

export const TransitionResultSchema = z.object({
  task: TaskResourceSchema,
  transition: TransitionResourceSchema,
  replayed: z.boolean().meta({
    description: "True when this transition_id was already applied: nothing was written, the first result is returned.",
  }),
});

export const NextStepsSchema = z.object({
  task_id: z.string(),
  status: z.string(),
  version: z.int(),
  terminal: z.boolean(),
  steps: z.array(
    z.object({
      to: z.string(),
      description: z.string(),
      allowed: z
        .boolean()
        .meta({ description: "True when the transition would be accepted now, with an empty patch." }),
      blocked_by: z.array(InvariantViolationSchema),
      guards: z.array(GuardSchema),
    }),
  ),
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

/** The task as `principal` may see it: restricted state fields masked unless they have clearance. */
export function taskResourceFor(principal: Principal, task: TaskView): TaskResource {
  const { value, maskedFields } = maskTaskForReader(principal, task);
  return { ...taskResource(value), masked_fields: maskedFields };
}

/** A transition as `principal` may see it, its patch under the classes of the task's workflow. */
export function transitionResourceFor(
  principal: Principal,
  transition: TransitionView,
  workflowDigest: string,
): TransitionResource {
  const { value, maskedFields } = maskTransitionForReader(principal, transition, workflowDigest);
  return { ...transitionResource(value), masked_fields: maskedFields };
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

export function nextStepsResource(
  task: TaskView,
  def: WorkflowDefinition,
  steps: NextStep[],
): z.infer<typeof NextStepsSchema> {
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
