import type { Db, Tx } from "@/lib/db/client";
import {
  MASKED_VALUE,
  maskRestricted,
  payloadClassifier,
  taskStateClassifier,
  type DataClassMap,
  type ToolDataClasses,
} from "@/lib/model/data-classes";
import { mayReadRestricted, type Principal } from "@/lib/model/permissions";
import { dataClassesOfTool } from "@/lib/model/tools/built-in-tools";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { ExecutionView } from "@/lib/stores/execution-store";
import type { TaskView, TransitionView } from "@/lib/stores/tasks/task-views";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";
import { diffStates } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import type { CheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import type { CheckpointRestoreView, RestorePlan } from "@/lib/model/checkpoints/restore-plan";

/**
 * What a reader is shown of restricted values: everything, when they have
 * clearance (lib/model/permissions.ts mayReadRestricted), else each
 * restricted field replaced by "[restricted]" and named in `maskedFields`
 * (JSON pointers into the resource: `/request/customer_id`). Applied on the
 * server by every API resource and console page that shows a task's state,
 * its transitions, a tool call or a checkpoint's payload, so the masked
 * value never leaves the server (docs/encryption.md "Data classes").
 */
export interface MaskedRead<T> {
  value: T;
  maskedFields: string[];
}

/** The classes of a task's state: its workflow's declarations over the shared defaults. */
export function taskDataClassesOf(workflowDigest: string): DataClassMap | undefined {
  return getWorkflowByDigest(workflowDigest)?.data_classes;
}

export function maskTaskForReader(principal: Principal, task: TaskView): MaskedRead<TaskView> {
  if (mayReadRestricted(principal)) return { value: task, maskedFields: [] };
  const { value, masked } = maskRestricted(
    task.state,
    taskStateClassifier(taskDataClassesOf(task.workflow.digest)),
    "/state",
  );
  return { value: { ...task, state: value }, maskedFields: masked };
}

/** A transition's patch, under the classes of the task's workflow (a patch's pointers are the state's). */
export function maskTransitionForReader(
  principal: Principal,
  transition: TransitionView,
  workflowDigest: string,
): MaskedRead<TransitionView> {
  if (mayReadRestricted(principal)) return { value: transition, maskedFields: [] };
  const { value, masked } = maskRestricted(
    transition.patch,
    taskStateClassifier(taskDataClassesOf(workflowDigest)),
    "/patch",
  );
  return { value: { ...transition, patch: value }, maskedFields: masked };
}

/** The classes a call's tool version declares (an unknown version declares none: everything confidential, nothing masked). */
export async function toolDataClassesOf(
  db: Db | Tx,
  execution: Pick<ExecutionView, "tool" | "toolVersion">,
): Promise<ToolDataClasses> {
  const def = await toolDefinitionOf(db, execution.tool, execution.toolVersion ?? null);
  return def ? dataClassesOfTool(def) : {};
}

/** A call's request, result and evidence masked under its tool's classes; `prefix` places the pointers (`/executions/2`). */
export function maskExecutionWith(
  classes: ToolDataClasses,
  execution: ExecutionView,
  prefix = "",
): MaskedRead<ExecutionView> {
  const request = maskRestricted(execution.request, payloadClassifier(classes.request), `${prefix}/request`);
  const result = maskRestricted(execution.result, payloadClassifier(classes.result), `${prefix}/result`);
  const evidence = maskRestricted(execution.evidence, payloadClassifier(classes.evidence), `${prefix}/evidence`);
  return {
    value: { ...execution, request: request.value, result: result.value, evidence: evidence.value },
    maskedFields: [...request.masked, ...result.masked, ...evidence.masked],
  };
}

export async function maskExecutionForReader(
  db: Db | Tx,
  principal: Principal,
  execution: ExecutionView,
): Promise<MaskedRead<ExecutionView>> {
  if (mayReadRestricted(principal)) return { value: execution, maskedFields: [] };
  return maskExecutionWith(await toolDataClassesOf(db, execution), execution);
}

/** Several calls (a task's ledger): each masked under its own tool version's classes. */
export async function maskExecutionsForReader(
  db: Db | Tx,
  principal: Principal,
  executions: ExecutionView[],
): Promise<Array<MaskedRead<ExecutionView>>> {
  if (mayReadRestricted(principal)) return executions.map((value) => ({ value, maskedFields: [] }));
  return Promise.all(executions.map((e) => maskExecutionForReader(db, principal, e)));
}

/** A call's events: each event's evidence is the provider's proof, under the tool's evidence classes. */
export async function maskExecutionEventsForReader<E extends { evidence: unknown }>(
  db: Db | Tx,
  principal: Principal,
  execution: Pick<ExecutionView, "tool" | "toolVersion">,
  events: E[],
): Promise<Array<MaskedRead<E>>> {
  if (mayReadRestricted(principal)) return events.map((value) => ({ value, maskedFields: [] }));
  const classify = payloadClassifier((await toolDataClassesOf(db, execution)).evidence);
  return events.map((event) => {
    const { value, masked } = maskRestricted(event.evidence, classify, "/evidence");
    return { value: { ...event, evidence: value }, maskedFields: masked };
  });
}

/**
 * A checkpoint as `principal` may see it: its snapshot and the task now,
 * both under the classes of the task's workflow, and the diff between them
 * recomputed from the masked two, so no restricted value travels in a diff
 * entry. A restricted field that changed shows no change to an uncleared
 * reader: they cannot see either value, and the digests still tell whether
 * the snapshot is the one that was signed.
 */
export function maskCheckpointDetailForReader(
  principal: Principal,
  detail: CheckpointDetail,
): MaskedRead<CheckpointDetail> {
  if (mayReadRestricted(principal)) return { value: detail, maskedFields: [] };
  const classify = taskStateClassifier(taskDataClassesOf(detail.task.workflow.digest));
  const task = maskTaskForReader(principal, detail.task);
  const snapshot = detail.document
    ? maskRestricted(detail.document.state_snapshot, classify, "/document/state_snapshot")
    : null;
  const document = detail.document && snapshot ? { ...detail.document, state_snapshot: snapshot.value } : null;
  return {
    value: {
      ...detail,
      document,
      task: task.value,
      diffToCurrent: document ? diffStates(document.state_snapshot, task.value.state) : [],
    },
    maskedFields: [...(snapshot?.masked ?? []), ...task.maskedFields.map((p) => `/task${p}`)],
  };
}

/** One part of a call's payload (a provider's record is in its result's vocabulary) masked under the tool's classes. */
export async function maskToolPayloadForReader<T>(
  db: Db | Tx,
  principal: Principal,
  execution: Pick<ExecutionView, "tool" | "toolVersion">,
  part: keyof ToolDataClasses,
  value: T,
  prefix: string,
): Promise<MaskedRead<T>> {
  if (mayReadRestricted(principal)) return { value, maskedFields: [] };
  const { value: masked, masked: maskedFields } = maskRestricted(
    value,
    payloadClassifier((await toolDataClassesOf(db, execution))[part]),
    prefix,
  );
  return { value: masked, maskedFields };
}

/** A diff entry's path (`subtasks[st_1].title`) as pointer tokens; a subtask's id stands where the classes say `*`. */
function tokensOfDiffPath(path: string): string[] {
  return path.length === 0
    ? []
    : path
        .replace(/\[([^\]]*)\]/g, ".$1")
        .split(".")
        .filter((t) => t.length > 0);
}

/**
 * A restore plan as `principal` may see it: its resulting state masked like
 * a task's, and each diff entry's values masked under the class of the
 * field the entry is about (a whole added subtask masks its restricted
 * members). The pointers are into the plan: `/resulting_state/…`,
 * `/diff/<entry>/before…`.
 */
export function maskRestorePlanForReader<P extends Pick<RestorePlan, "resultingState" | "diff">>(
  principal: Principal,
  plan: P,
  workflowDigest: string,
): MaskedRead<P> {
  if (mayReadRestricted(principal)) return { value: plan, maskedFields: [] };
  const classify = taskStateClassifier(taskDataClassesOf(workflowDigest));
  const masked: string[] = [];
  const resultingState = plan.resultingState ? maskRestricted(plan.resultingState, classify, "/resulting_state") : null;
  masked.push(...(resultingState?.masked ?? []));
  const diff = plan.diff.map((entry, i) => {
    const at = tokensOfDiffPath(entry.path);
    const side = (value: unknown, name: "before" | "after"): unknown => {
      if (at.length > 0 && classify(at) === "restricted") {
        masked.push(`/diff/${i}/${name}`);
        return MASKED_VALUE;
      }
      const inner = maskRestricted(value, (tokens) => classify([...at, ...tokens]), `/diff/${i}/${name}`);
      masked.push(...inner.masked);
      return inner.value;
    };
    return {
      ...entry,
      ...("before" in entry ? { before: side(entry.before, "before") } : {}),
      ...("after" in entry ? { after: side(entry.after, "after") } : {}),
    };
  });
  return {
    value: { ...plan, resultingState: resultingState ? resultingState.value : null, diff },
    maskedFields: masked,
  };
}

/** Restore attempts (each with its plan) under the classes of the task's workflow. */
export function maskRestoresForReader(
  principal: Principal,
  restores: CheckpointRestoreView[],
  workflowDigest: string,
): MaskedRead<CheckpointRestoreView[]> {
  const maskedFields: string[] = [];
  const value = restores.map((restore, i) => {
    const seen = maskRestorePlanForReader(principal, restore.plan, workflowDigest);
    maskedFields.push(...seen.maskedFields.map((p) => `/restores/${i}/plan${p}`));
    return { ...restore, plan: seen.value };
  });
  return { value, maskedFields };
}
