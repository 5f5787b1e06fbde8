import type { Db } from "@/lib/db/client";
import type { StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { getCheckpointRowOrThrow } from "@/lib/use-cases/checkpoints/checkpoint-rows";

/** A checkpoint row exactly as stored: what a standby imports (the bytes travel verbatim, signature and all). */
export async function exportCheckpoint(db: Db, checkpointId: string): Promise<StoredCheckpoint> {
  const {
    id,
    taskId,
    stateVersion,
    schemaVersion,
    trigger,
    payload,
    snapshotDigest,
    signature,
    keyId,
    createdAt,
    createdBy,
  } = await getCheckpointRowOrThrow(db, checkpointId);
  return {
    id,
    taskId,
    stateVersion,
    schemaVersion,
    trigger,
    payload,
    snapshotDigest,
    signature,
    keyId,
    createdAt,
    createdBy,
  };
}
