import type { Db } from "@/lib/db/client";
import { isAppError } from "@/lib/core/errors";
import { configuredKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { currentPolicyVersion } from "@/lib/model/checkpoints/checkpoint-policy";
import { listRestores } from "@/lib/use-cases/checkpoints/list-restores";
import { getCheckpointDetail, type CheckpointDetail } from "@/lib/use-cases/checkpoints/get-checkpoint-detail";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import type { CheckpointRestoreView } from "@/lib/model/checkpoints/restore-plan";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { listExecutions, type ExecutionView } from "@/lib/stores/execution-store";
import { getTask, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import type { Principal } from "@/lib/model/permissions";
import {
  maskCheckpointDetailForReader,
  maskRestoresForReader,
  maskTaskForReader,
} from "@/lib/use-cases/data-classes/mask-for-reader";
import { timelineWindow } from "@/lib/adapters/console/tasks/task-detail";
import { integrityVerdict, type IntegrityVerdict } from "@/lib/adapters/console/checkpoints/checkpoints-format";
import { buildTimeline, type TimelineData } from "@/lib/adapters/console/checkpoints/checkpoints-timeline";

/**
 * The checkpoint pages' loaders. Everything about checkpoints is read
 * through the use cases in lib/use-cases/checkpoints/ (the owners of the tables), which
 * verifies each one as it reads it; this module only shapes the answers
 * for the pages.
 */

export interface CheckpointRow {
  summary: CheckpointSummary;
  verdict: IntegrityVerdict;
}

export interface TaskCheckpointsData {
  task: TaskView;
  def: WorkflowDefinition | undefined;
  /** Newest first. */
  checkpoints: CheckpointRow[];
  /** Every restore attempt, applied or refused, newest first. */
  restores: CheckpointRestoreView[];
  timeline: TimelineData;
  /** True when older transitions exist beyond the chart's window. */
  transitionsTruncated: boolean;
  token: string;
  /** What the reader's role may not see, masked on the server (lib/use-cases/data-classes/mask-for-reader.ts). */
  maskedFields: string[];
}

export interface CheckpointInspectorData {
  detail: CheckpointDetail;
  def: WorkflowDefinition | undefined;
  verdict: IntegrityVerdict;
  /** The executions the checkpoint names as tool receipts, where the ledger still has them. */
  receipts: Array<{ id: string; execution: ExecutionView | null }>;
  /** Restore attempts of this checkpoint, newest first. */
  restores: CheckpointRestoreView[];
  /** The policy in force now, beside the one the checkpoint recorded. */
  currentPolicyVersion: string;
  /** The signing key is in this server's keyring. */
  keyKnown: boolean;
  token: string;
  /** What the reader's role may not see, masked on the server. */
  maskedFields: string[];
}

/** Key ids only: which checkpoints this server can check a signature of. The secrets stay in the keyring. */
function knownKeyIds(): ReadonlySet<string> {
  return new Set(Object.keys(configuredKeyring().keys));
}

export function verdictOf(summary: Pick<CheckpointSummary, "integrity" | "keyId">): IntegrityVerdict {
  return integrityVerdict(summary.integrity, summary.keyId, knownKeyIds());
}

function isNotFound(error: unknown): boolean {
  return isAppError(error) && error.code === "not_found";
}

export async function loadTaskCheckpoints(
  db: Db,
  taskId: string,
  principal: Principal,
): Promise<TaskCheckpointsData | null> {
  const read = await getTask(db, taskId, "readable");
  if (!read) return null;
  const { value: task, maskedFields: taskMasked } = maskTaskForReader(principal, read);
  const [summaries, allRestores, executions, transitions, token] = await Promise.all([
    listCheckpoints(db, taskId),
    listRestores(db, taskId),
    listExecutions(db, taskId),
    listTransitions(db, taskId, { afterVersion: Math.max(0, task.version - timelineWindow), limit: timelineWindow }),
    checkpointsToken(db, taskId),
  ]);
  const rows = summaries.map((summary) => ({ summary, verdict: verdictOf(summary) }));
  const { value: restores, maskedFields: restoresMasked } = maskRestoresForReader(
    principal,
    allRestores,
    task.workflow.digest,
  );
  return {
    task,
    def: getWorkflowByDigest(task.workflow.digest),
    checkpoints: [...rows].reverse(),
    restores,
    timeline: buildTimeline({
      transitions,
      executions,
      checkpoints: rows.map(({ summary, verdict }) => ({ ...summary, integrity: verdict.status })),
      restores,
    }),
    transitionsTruncated: task.version > timelineWindow,
    token: token ?? "",
    maskedFields: [...taskMasked.map((p) => `/task${p}`), ...restoresMasked],
  };
}

export async function loadCheckpointInspector(
  db: Db,
  checkpointId: string,
  principal: Principal,
): Promise<CheckpointInspectorData | null> {
  let read: CheckpointDetail;
  try {
    read = await getCheckpointDetail(db, checkpointId);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  const { value: detail, maskedFields: detailMasked } = maskCheckpointDetailForReader(principal, read);
  const taskId = detail.task.id;
  const [executions, allRestores, token] = await Promise.all([
    listExecutions(db, taskId),
    listRestores(db, taskId),
    checkpointsToken(db, taskId),
  ]);
  const byId = new Map(executions.map((e) => [e.id, e]));
  const { value: restores, maskedFields: restoresMasked } = maskRestoresForReader(
    principal,
    allRestores.filter((r) => r.checkpointId === checkpointId),
    detail.task.workflow.digest,
  );
  return {
    detail,
    def: getWorkflowByDigest(detail.task.workflow.digest),
    verdict: verdictOf(detail.summary),
    receipts: (detail.document?.tool_receipt_ids ?? []).map((id) => ({ id, execution: byId.get(id) ?? null })),
    restores,
    currentPolicyVersion: currentPolicyVersion(),
    keyKnown: knownKeyIds().has(detail.summary.keyId),
    token: token ?? "",
    maskedFields: [...detailMasked, ...restoresMasked],
  };
}

/**
 * What the checkpoint pages poll: it moves with the task's version, a new
 * checkpoint and a new restore attempt. Counted rather than listed, so a
 * poll every few seconds does not verify every signature of the task.
 * Null when the task does not exist.
 */
export async function checkpointsToken(db: Db, taskId: string): Promise<string | null> {
  const [task, checkpoints, newest, restores] = await Promise.all([
    db.task.findFirst({ where: { id: taskId }, select: { version: true } }),
    db.checkpoint.count({ where: { taskId } }),
    db.checkpoint.findFirst({
      where: { taskId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true },
    }),
    db.checkpointRestore.count({ where: { taskId } }),
  ]);
  if (!task) return null;
  return `${task.version}.${checkpoints}.${newest?.id ?? "-"}.${restores}`;
}

/** For the task page's card: how many checkpoints and restore attempts, and the newest checkpoint's version. */
export async function countTaskCheckpoints(
  db: Db,
  taskId: string,
): Promise<{ checkpoints: number; newestVersion: number | null; restores: number }> {
  const [checkpoints, newest, restores] = await Promise.all([
    db.checkpoint.count({ where: { taskId } }),
    db.checkpoint.findFirst({
      where: { taskId },
      orderBy: [{ stateVersion: "desc" }, { createdAt: "desc" }],
      select: { stateVersion: true },
    }),
    db.checkpointRestore.count({ where: { taskId } }),
  ]);
  return { checkpoints, newestVersion: newest?.stateVersion ?? null, restores };
}

/** Ids in a URL never contain `%`; a malformed escape simply finds nothing. */
export function idFromParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
