import type { Db } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import type { Principal } from "@/lib/model/permissions";
import { requireTaskReach } from "@/lib/use-cases/authority/require-task-reach";

/** The checkpoint's task within reach, else the 404 of a checkpoint that does not exist. */
export async function requireCheckpointReach(
  db: Db,
  principal: Principal,
  checkpointId: string,
  options: { drive?: boolean } = {},
): Promise<void> {
  const checkpoint = await db.checkpoint.findFirst({ where: { id: checkpointId }, select: { taskId: true } });
  // A missing checkpoint is left to the use case's own 404.
  if (!checkpoint) return;
  try {
    await requireTaskReach(db, principal, checkpoint.taskId, options);
  } catch (error) {
    if (isAppError(error) && error.code === "not_found")
      throw new AppError("not_found", `Checkpoint ${checkpointId} does not exist.`);
    throw error;
  }
}
