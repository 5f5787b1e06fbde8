import type { Task, Transition } from "@/lib/generated/prisma/client";
import { TaskStateSchema, type TaskPatch, type TaskState } from "@/lib/model/tasks/task-state";
import type { ActorKind } from "@/lib/model/workflows/workflow-definition";
import type { Db, Tx } from "@/lib/db/client";
import { openTaskPatch, openTaskState, type OpenMode } from "@/lib/stores/tasks/task-state-sealing";

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

/** The state of a readable view may hold unreadable markers where the schema wants other types: shown, never written back. */
function parseStateOf(mode: OpenMode): (opened: unknown) => TaskState {
  return (opened) => {
    if (mode === "strict") return TaskStateSchema.parse(opened);
    const parsed = TaskStateSchema.safeParse(opened);
    return parsed.success ? parsed.data : (opened as TaskState);
  };
}

export async function openTaskView(db: Db | Tx, row: Task, mode: OpenMode = "strict"): Promise<TaskView> {
  const state = await openTaskState(db, row.id, row.state, mode, parseStateOf(mode));
  return {
    id: row.id,
    workflow: { name: row.workflowName, version: row.workflowVersion, digest: row.workflowDigest },
    status: row.status,
    version: row.version,
    state,
    intentId: row.intentId,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
  };
}

/**
 * A row read with its own select (the monitor's, the reconciler's), its
 * state opened and not parsed: those readers judge the document themselves.
 */
export async function openTaskRow<R extends { id: string; state: unknown }>(
  db: Db | Tx,
  row: R,
  mode: OpenMode = "strict",
): Promise<R> {
  return { ...row, state: await openTaskState(db, row.id, row.state, mode, (opened) => opened) };
}

/** The state a transition produced, opened. */
export async function openStateAfter(db: Db | Tx, row: Transition, mode: OpenMode = "strict"): Promise<TaskState> {
  return openTaskState(db, row.taskId, row.stateAfter, mode, parseStateOf(mode));
}

export async function openTransitionView(
  db: Db | Tx,
  row: Transition,
  mode: OpenMode = "strict",
): Promise<TransitionView> {
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
    patch: (await openTaskPatch(db, row.id, row.patch, mode)) as TaskPatch,
    createdAt: row.createdAt,
  };
}
