import type { Db } from "@/lib/db/client";
import type { CheckpointRestoreView } from "@/lib/model/checkpoints/restore-plan";
import { restoreViewOf } from "@/lib/use-cases/checkpoints/checkpoint-rows";

/** Every restore attempt on the task, newest first. */
export async function listRestores(db: Db, taskId: string): Promise<CheckpointRestoreView[]> {
  const rows = await db.checkpointRestore.findMany({
    where: { taskId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 500,
  });
  return Promise.all(rows.map((row) => restoreViewOf(db, row)));
}
