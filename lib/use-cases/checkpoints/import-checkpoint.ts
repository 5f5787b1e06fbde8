import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { keyringOf, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint, type StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { summarize } from "@/lib/use-cases/checkpoints/checkpoint-rows";

/**
 * Stores a checkpoint taken elsewhere (the primary, before it was lost) on
 * this database, after verifying it against this database's task: a
 * standby never imports what it cannot verify. Importing the same bytes
 * twice is a no-op; different bytes under the same id are refused.
 */
export async function importCheckpoint(
  db: Db,
  record: StoredCheckpoint,
  options: CheckpointOptions = {},
): Promise<CheckpointSummary> {
  const task = await db.task.findUnique({ where: { id: record.taskId }, select: { id: true, workflowDigest: true } });
  if (!task) throw new AppError("not_found", `Task ${record.taskId} does not exist on this database.`);
  const verified = verifyStoredCheckpoint(record, keyringOf(options), { task });
  if (!verified.report.ok) {
    const failed = verified.report.checks.filter((c) => !c.ok);
    throw new AppError(
      "invariant_violated",
      `Checkpoint ${record.id} does not verify here: ${failed.map((c) => `${c.check}: ${c.message}`).join("; ")}`,
      {
        violations: failed.map((c) => ({ invariant: `checkpoint_${c.check}`, message: c.message })),
      },
    );
  }
  const existing = await db.checkpoint.findUnique({ where: { id: record.id } });
  if (existing) {
    if (existing.payload !== record.payload || existing.signature !== record.signature) {
      throw new AppError("idempotency_conflict", `Checkpoint ${record.id} exists here with different bytes.`);
    }
    return summarize(existing, verified);
  }
  await db.checkpoint.create({ data: { ...record } });
  return summarize(record, verified);
}
