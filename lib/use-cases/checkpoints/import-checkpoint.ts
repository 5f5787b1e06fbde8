import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { boundedJson, scanJsonTextDepth } from "@/lib/core/json-bounds";
import { parseOrThrow } from "@/lib/core/validation";
import { keyringOf, openedCheckpoint, sealedForStorage, type CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint, type StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { summarize } from "@/lib/use-cases/checkpoints/checkpoint-rows";

/**
 * Stores a checkpoint taken elsewhere (the primary, before it was lost) on
 * this database, after verifying it against this database's task: a
 * standby never imports what it cannot verify. Importing the same bytes
 * twice is a no-op; different bytes under the same id are refused. The
 * payload comes from another database, so its free-form part, the
 * `state_snapshot`, is bounded like every free-form JSON input before
 * anything walks it (a 400 naming the field).
 */
export async function importCheckpoint(
  db: Db,
  record: StoredCheckpoint,
  options: CheckpointOptions = {},
): Promise<CheckpointSummary> {
  refuseUnboundedSnapshot(record.payload);
  const task = await db.task.findFirst({ where: { id: record.taskId }, select: { id: true, workflowDigest: true } });
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
  const stored = await db.checkpoint.findFirst({ where: { id: record.id } });
  if (stored) {
    const existing = await openedCheckpoint(db, stored);
    if (existing.payload !== record.payload || existing.signature !== record.signature) {
      throw new AppError("idempotency_conflict", `Checkpoint ${record.id} exists here with different bytes.`);
    }
    return summarize(existing, verified);
  }
  // Exported in the clear (signed), sealed here under this database's own keys.
  await db.checkpoint.create({ data: await sealedForStorage(db, { ...record }) });
  return summarize(record, verified);
}

/**
 * JSON.parse, the digest and the schema check all recurse: text deeper than
 * this is refused unparsed. The snapshot's own bound (below) is tighter.
 */
const MAX_PAYLOAD_DEPTH = 64;

/**
 * Well above any snapshot a Verity writes (every string and list of a
 * TaskState is capped: at most about 6 MB of JSON, escapes included), so
 * only a snapshot no Verity wrote is refused.
 */
const SNAPSHOT_MAX_BYTES = 16 * 1024 * 1024;

const SnapshotBoundsSchema = z.object({ state_snapshot: boundedJson(z.unknown(), { maxBytes: SNAPSHOT_MAX_BYTES }) });

/** A payload that is not JSON, or has no snapshot, is left to the verification, which says what is wrong with it. */
function refuseUnboundedSnapshot(payload: string): void {
  const depth = scanJsonTextDepth(payload, MAX_PAYLOAD_DEPTH);
  if (depth.tooDeep) {
    const field = depth.member ?? "payload";
    const message = `nests deeper than ${MAX_PAYLOAD_DEPTH} levels`;
    throw new AppError("validation_failed", `${field}: ${message}`, { errors: [{ field, message }] });
  }
  let document: unknown;
  try {
    document = JSON.parse(payload);
  } catch {
    return;
  }
  if (typeof document !== "object" || document === null || !("state_snapshot" in document)) return;
  parseOrThrow(SnapshotBoundsSchema, { state_snapshot: document.state_snapshot });
}
