import type { Task, Transition } from "@/lib/generated/prisma/client";
import { TaskStateSchema, type TaskPatch, type TaskState } from "@/lib/model/tasks/task-state";
import type { ActorKind } from "@/lib/model/workflows/workflow-definition";

/**
 * What a task and a transition look like outside the store: the rows of
 * `tasks` and `transitions` with the state document parsed, as the API, the
 * console and the other use cases receive them.
 */

export interface TaskView {
  id: string;
  workflow: { name: string; version: number; digest: string };
  status: string;
  version: number;
  state: TaskState;
  intentId: string;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string;
}

export interface TransitionView {
  id: string;
  taskId: string;
  fromVersion: number | null;
  toVersion: number;
  fromStatus: string | null;
  toStatus: string;
  actor: string;
  actorKind: ActorKind;
  reason: string | null;
  patch: TaskPatch;
  createdAt: Date;
}

export interface TransitionResult {
  task: TaskView;
  transition: TransitionView;
  /** True when this was a retry of an already-applied transition id. */
  replayed: boolean;
}

export function toTaskView(row: Task): TaskView {
  return {
    id: row.id,
    workflow: { name: row.workflowName, version: row.workflowVersion, digest: row.workflowDigest },
    status: row.status,
    version: row.version,
    state: TaskStateSchema.parse(row.state),
    intentId: row.intentId,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
  };
}

export function toTransitionView(row: Transition): TransitionView {
  return {
    id: row.id,
    taskId: row.taskId,
    fromVersion: row.fromVersion,
    toVersion: row.toVersion,
    fromStatus: row.fromStatus,
    toStatus: row.toStatus,
    actor: row.actor,
    actorKind: row.actorKind,
    reason: row.reason,
    patch: row.patch as TaskPatch,
    createdAt: row.createdAt,
  };
}
