import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import {
  ArtifactsSchema,
  emptyGates,
  IdentitySchema,
  NewSubtaskSchema,
  TASK_STATE_SCHEMA_VERSION,
  type TaskState,
} from "@/lib/model/tasks/task-state";
import { findLatestWorkflow, listWorkflowNames } from "@/lib/stores/workflow-registry";
import { assertValidState } from "@/lib/stores/tasks/task-state-checks";
import { insertTask } from "@/lib/stores/tasks/task-store";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";

/**
 * A new task at version 1 in its workflow's initial status. With a client
 * task id the create is idempotent: the same request again returns the task,
 * a different one under the same id is refused.
 */

export const CreateTaskInputSchema = z.strictObject({
  workflow: z.string().min(1).max(64),
  task_id: clientIdSchema.optional(),
  intent_id: clientIdSchema,
  subtasks: z.array(NewSubtaskSchema).max(200).optional(),
  artifacts: ArtifactsSchema.optional(),
  budget: z.strictObject({ currency_committed_usd: z.number().finite().min(0).max(1e12) }).optional(),
  active_agents: z.array(IdentitySchema).max(100).optional(),
});

export async function createTask(
  db: Db,
  rawInput: unknown,
  actor: Actor,
): Promise<{ task: TaskView; created: boolean }> {
  const input = parseOrThrow(CreateTaskInputSchema, rawInput);
  // The registry's newest version, read here rather than from this process's
  // cache: a version published a moment ago by another process (the CLI,
  // another server) is what new tasks get.
  const def = await findLatestWorkflow(db, input.workflow);
  if (!def) {
    const names = (await listWorkflowNames(db)).join(", ");
    throw new AppError("validation_failed", `workflow: unknown workflow; expected one of ${names}`, {
      errors: [{ field: "workflow", message: `unknown workflow; expected one of ${names}` }],
    });
  }
  const taskId = input.task_id ?? newId("task");
  const requestDigest = digestOf({ op: "create", ...input, task_id: taskId });
  const now = new Date();
  const state: TaskState = {
    schema_version: TASK_STATE_SCHEMA_VERSION,
    task_id: taskId,
    version: 1,
    status: def.initial,
    gates: { ...emptyGates },
    artifacts: input.artifacts ?? {},
    active_agents: input.active_agents ?? [],
    completed_agents: [],
    failed_agents: [],
    budget: {
      currency_committed_usd: input.budget?.currency_committed_usd ?? 0,
      currency_spent_usd: 0,
      tokens_spent: 0,
      hops_used: 0,
    },
    subtasks: input.subtasks ?? [],
    workflow_digest: def.digest,
    intent_id: input.intent_id,
    updated_at: now.toISOString(),
    updated_by: actor.identity,
  };
  assertValidState(def, state);
  try {
    return { task: await insertTask(db, { def, state, actor, requestDigest, createdAt: now }), created: true };
  } catch (error) {
    if (!isUniqueViolation(error) || !input.task_id) throw error;
    // The task id exists: a retry of the same create returns the task, anything else is a conflict.
    const first = await db.transition.findFirst({ where: { taskId, fromVersion: null } });
    if (first?.requestDigest !== requestDigest) {
      throw new AppError(
        "idempotency_conflict",
        `Task ${taskId} already exists and was created with different parameters.`,
      );
    }
    return { task: await getTaskOrThrow(db, taskId), created: false };
  }
}
