import type { Db } from "@/lib/db/client";
import type { CheckpointOptions } from "@/lib/stores/checkpoint-store";
import type { StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import type { Actor } from "@/lib/model/actor";
import { importCheckpoint } from "@/lib/use-cases/checkpoints/import-checkpoint";
import { restoreCheckpoint, type RestoreResult } from "@/lib/use-cases/checkpoints/restore-checkpoint";

/**
 * Failover: a standby whose copy of the task is older than a checkpoint the
 * primary took imports the checkpoint and rolls the task forward to it,
 * through the same verified restore path (a new transition on the standby,
 * its budget the greater of the two). `expected_version` is the standby's.
 */
export async function rollForwardFromCheckpoint(
  db: Db,
  record: StoredCheckpoint,
  raw: { expected_version: number; reason: string; restore_id?: string },
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<RestoreResult> {
  await importCheckpoint(db, record, options);
  return restoreCheckpoint(db, record.id, { ...raw, rewind: false }, actor, options);
}
