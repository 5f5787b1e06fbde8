import type { Db } from "@/lib/db/client";
import { getTask, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { type TaskView, type TransitionView } from "@/lib/stores/tasks/task-views";
import { nextSteps } from "@/lib/model/tasks/transition-rules";
import type { ActorKind, WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { edgeKey } from "@/lib/adapters/console/tasks/workflow-graph";
import { isReasonRequired } from "@/lib/adapters/console/shared/status";
import type { Principal } from "@/lib/model/permissions";
import { maskTaskForReader, maskTransitionForReader } from "@/lib/use-cases/data-classes/mask-for-reader";

/** The timeline shows at most this many of the newest transitions; the path is drawn from the same window. */
export const timelineWindow = 200;

export interface StepView {
  to: string;
  description: string;
  by: ActorKind[];
  /** Why the edge cannot be taken right now; empty when it can. */
  blockedBy: string[];
  reasonRequired: boolean;
}

export interface TaskDetail {
  task: TaskView;
  /** Undefined when the task is pinned to a digest this server does not know. */
  def: WorkflowDefinition | undefined;
  /** Newest first. */
  transitions: TransitionView[];
  /** True when older transitions exist beyond the window. */
  timelineTruncated: boolean;
  /** Every edge out of the current state, for every kind of actor. */
  steps: StepView[];
  /** The edges a person may take (actor kind `user`). */
  userSteps: StepView[];
  path: { edges: Set<string>; states: Set<string> };
  /** What the reader's role may not see, masked on the server (`/state/…`, `/transitions/<n>/patch/…`). */
  maskedFields: string[];
}

function stepViews(def: WorkflowDefinition, task: TaskView, kind: ActorKind): StepView[] {
  return nextSteps(def, task.state, kind).map((s) => ({
    to: s.edge.to,
    description: s.edge.description,
    by: s.edge.by,
    blockedBy: s.blockedBy.map((v) => v.message),
    reasonRequired: isReasonRequired(def, s.edge.to),
  }));
}

/** Every edge out of the current state once, with the union of who may take it and what blocks it for the first of them. */
function allSteps(def: WorkflowDefinition, task: TaskView): StepView[] {
  const byTarget = new Map<string, StepView>();
  for (const kind of ["user", "agent", "system"] as const) {
    for (const step of stepViews(def, task, kind)) if (!byTarget.has(step.to)) byTarget.set(step.to, step);
  }
  return [...byTarget.values()];
}

/**
 * The task page's data. The steps are judged on the state as it is (a guard
 * reads the values); what is shown is masked for `principal`.
 */
export async function loadTaskDetail(db: Db, taskId: string, principal: Principal): Promise<TaskDetail | null> {
  const read = await getTask(db, taskId, "readable");
  if (!read) return null;
  const { value: task, maskedFields: taskMasked } = maskTaskForReader(principal, read);
  const ascending = await listTransitions(db, taskId, {
    afterVersion: Math.max(0, task.version - timelineWindow),
    limit: timelineWindow,
  });
  const def = getWorkflowByDigest(task.workflow.digest);
  const path = { edges: new Set<string>(), states: new Set<string>() };
  for (const t of ascending) {
    path.states.add(t.toStatus);
    if (t.fromStatus && t.fromStatus !== t.toStatus) path.edges.add(edgeKey(t.fromStatus, t.toStatus));
  }
  const transitions = [...ascending].reverse().map((t) => maskTransitionForReader(principal, t, task.workflow.digest));
  return {
    task,
    def,
    transitions: transitions.map((t) => t.value),
    timelineTruncated: task.version > timelineWindow,
    steps: def ? allSteps(def, read) : [],
    userSteps: def ? stepViews(def, read, "user") : [],
    path,
    maskedFields: [...taskMasked, ...transitions.flatMap((t, i) => t.maskedFields.map((p) => `/transitions/${i}${p}`))],
  };
}
