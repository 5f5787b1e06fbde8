import { z } from "zod";
import type { InvariantViolation } from "@/lib/core/errors";
import { checkStateInvariants } from "@/lib/model/tasks/transition-rules";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { isTerminal, type WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { TaskView } from "@/lib/stores/tasks/task-views";

/**
 * What a migration of one task would do, decided the same way by the plan
 * (a dry run) and by its application (again, on the locked row, so a plan
 * made on a task that moved since is never applied over newer state).
 */

const StateNameSchema = z.string().min(1).max(64);

export const StateMappingSchema = z
  .record(StateNameSchema, StateNameSchema)
  .meta({ description: "From each state of the task's version to a state of the new version." });

export interface MigrationTaskPlan {
  task_id: string;
  /** The task version the plan saw: applying needs the task still there. Null when it does not exist. */
  task_version: number | null;
  from: { version: number; digest: string } | null;
  current_state: string | null;
  /** The state it would have under the new version; null where the mapping says nothing of its state. */
  mapped_state: string | null;
  allowed: boolean;
  /** Why not: each the rule it would break, by name. */
  refusals: InvariantViolation[];
}

export function planTaskMigration(
  taskId: string,
  task: TaskView | null,
  to: WorkflowDefinition,
  mapping: Record<string, string>,
): MigrationTaskPlan {
  if (!task)
    return refused(taskId, null, null, null, [{ invariant: "task_exists", message: `Task ${taskId} does not exist.` }]);
  const from = { version: task.workflow.version, digest: task.workflow.digest };
  const current = task.status;
  const mapped = Object.hasOwn(mapping, current) ? (mapping[current] ?? null) : null;
  const refusals: InvariantViolation[] = [];
  const base = { task_id: taskId, task_version: task.version, from, current_state: current, mapped_state: mapped };
  if (task.workflow.name !== to.name)
    refusals.push({
      invariant: "migration_same_workflow",
      message: `Task ${taskId} runs ${task.workflow.name}, not ${to.name}: a task moves between versions of its own workflow only.`,
    });
  else if (task.workflow.version >= to.version)
    refusals.push({
      invariant: "migration_to_newer_version",
      message: `Task ${taskId} is on ${to.name} v${task.workflow.version}; it can only move to a newer version than that, not v${to.version}.`,
    });
  const def = getWorkflowByDigest(task.workflow.digest);
  if (def && isTerminal(def, current))
    refusals.push({
      invariant: "terminal_state_is_final",
      message: `Task ${taskId} has ended (${current}): an ended task stays on the version it ended under.`,
    });
  if (refusals.length > 0) return { ...base, allowed: false, refusals };
  if (mapped === null)
    return {
      ...base,
      allowed: false,
      refusals: [
        {
          invariant: "migration_state_mapped",
          message: `The mapping says nothing of ${current}, the state task ${taskId} is in: name the state of v${to.version} it moves to.`,
        },
      ],
    };
  if (!to.states[mapped])
    return {
      ...base,
      allowed: false,
      refusals: [
        {
          invariant: "status_in_workflow",
          message: `The mapping sends ${current} to ${mapped}, which is not a state of ${to.name} v${to.version}.`,
        },
      ],
    };
  if (isTerminal(to, mapped))
    refusals.push({
      invariant: "migration_keeps_task_running",
      message: `The mapping sends ${current} to ${mapped}, a terminal state: a migration moves running work and never ends it; end the task by its own edges.`,
    });
  // The new definition's invariants on the task's state as it stands: the
  // gates its mapped state requires, its mandatory work, its budget.
  refusals.push(...checkStateInvariants(to, { ...task.state, status: mapped, workflow_digest: to.digest }));
  return { ...base, allowed: refusals.length === 0, refusals };
}

function refused(
  taskId: string,
  version: number | null,
  from: MigrationTaskPlan["from"],
  current: string | null,
  refusals: InvariantViolation[],
): MigrationTaskPlan {
  return {
    task_id: taskId,
    task_version: version,
    from,
    current_state: current,
    mapped_state: null,
    allowed: false,
    refusals,
  };
}

/** A refusal of the whole task for a reason found at apply time (the plan is stale). */
export function staleRefusal(plan: MigrationTaskPlan, expectedVersion: number): MigrationTaskPlan {
  return {
    ...plan,
    allowed: false,
    refusals: [
      {
        invariant: "migration_plan_current",
        message: `Task ${plan.task_id} moved since the plan: planned at version ${expectedVersion}, it is at ${plan.task_version ?? "none"}${plan.current_state ? ` (${plan.current_state})` : ""}. Plan again.`,
      },
    ],
  };
}
