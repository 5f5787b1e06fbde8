import type { Db } from "@/lib/db/client";
import { keyringOf, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import type { IntegrityReport } from "@/lib/model/checkpoints/checkpoint-reports";
import { getCheckpointRowOrThrow } from "@/lib/use-cases/checkpoints/checkpoint-rows";

export async function verifyCheckpoint(
  db: Db,
  checkpointId: string,
  options: CheckpointOptions = {},
): Promise<IntegrityReport> {
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  const task = await db.task.findFirst({ where: { id: row.taskId }, select: { id: true, workflowDigest: true } });
  return verifyStoredCheckpoint(row, keyringOf(options), { task }).report;
}
