import type { Db } from "@/lib/db/client";
import { keyringOf, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { diffStates } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import type { CheckpointDocument } from "@/lib/model/checkpoints/checkpoint-schema";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { CheckpointSummary, IntegrityReport, StateDiffEntry } from "@/lib/model/checkpoints/checkpoint-reports";
import { getCheckpointRowOrThrow, summarize } from "@/lib/use-cases/checkpoints/checkpoint-rows";

export interface CheckpointDetail {
  summary: CheckpointSummary;
  /** The document (upgraded to v2, with its signature); null when the payload cannot be read. */
  document: CheckpointDocument | null;
  integrity: IntegrityReport;
  task: TaskView;
  /** before = the checkpoint's snapshot, after = the task's current state. Empty when the document is unreadable. */
  diffToCurrent: StateDiffEntry[];
}

export async function getCheckpointDetail(
  db: Db,
  checkpointId: string,
  options: CheckpointOptions = {},
): Promise<CheckpointDetail> {
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  const task = await getTaskOrThrow(db, row.taskId, "readable");
  const verified = verifyStoredCheckpoint(row, keyringOf(options), {
    task: { id: task.id, workflowDigest: task.workflow.digest },
  });
  const document = verified.parsed
    ? { ...verified.parsed.document, integrity: { ...verified.parsed.document.integrity, signature: row.signature } }
    : null;
  return {
    summary: summarize(row, verified),
    document,
    integrity: verified.report,
    task,
    diffToCurrent: document ? diffStates(document.state_snapshot, task.state) : [],
  };
}
