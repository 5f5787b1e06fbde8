import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { keyringOf, openedCheckpoint, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { summarize } from "@/lib/use-cases/checkpoints/checkpoint-rows";

/** The task's checkpoints, oldest first (the newest 500), each verified. */
export async function listCheckpoints(
  db: Db,
  taskId: string,
  options: CheckpointOptions = {},
): Promise<CheckpointSummary[]> {
  const task = await db.task.findFirst({ where: { id: taskId }, select: { id: true, workflowDigest: true } });
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  const rows = await db.checkpoint.findMany({
    where: { taskId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 500,
  });
  const keyring = keyringOf(options);
  const opened = await Promise.all(rows.reverse().map((row) => openedCheckpoint(db, row)));
  return opened.map((row) => summarize(row, verifyStoredCheckpoint(row, keyring, { task })));
}
