import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { digestOf } from "@/lib/core/canonical-json";
import { parseOrThrow } from "@/lib/core/validation";
import { graphCheckpointAuditEntry } from "@/lib/model/audit/audit-events";
import { decideParent, PutGraphCheckpointInputSchema } from "@/lib/model/graph/graph-checkpoint";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { findGraphCheckpoint, findGraphHead, insertGraphCheckpoint } from "@/lib/stores/graph-checkpoints";
import { requireGraphThreadReach } from "@/lib/use-cases/graph/graph-thread-reach";
import { writeThroughTask } from "@/lib/use-cases/graph/graph-write";

export interface PutGraphCheckpointResult {
  taskId: string;
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  forkedFrom: string | null;
  taskVersion: number;
  /** The same checkpoint was already stored (a retried put): nothing was written now. */
  replayed: boolean;
}

/**
 * LangGraph's put: a checkpoint, its changed channels' values, and where it
 * came from, stored as a change of the thread's task. A retry of a stored
 * checkpoint gets the first answer; other content under the same id is
 * refused. A put that continues from anything but its namespace's head is a
 * fork: recorded when the caller replays on purpose, refused otherwise
 * (decideParent).
 */
export async function putGraphCheckpoint(
  db: Db,
  principal: Principal,
  rawInput: unknown,
): Promise<PutGraphCheckpointResult> {
  const input = parseOrThrow(PutGraphCheckpointInputSchema, rawInput);
  const thread = await requireGraphThreadReach(db, principal, input.namespace, input.thread_id, { drive: true });
  const actor = actorOf(principal);
  const contentDigest = digestOf({
    parent_checkpoint_id: input.parent_checkpoint_id ?? null,
    checkpoint: input.checkpoint,
    channel_versions: input.channel_versions,
    metadata: input.metadata,
    blobs: input.blobs,
  });
  const result = (forkedFrom: string | null, taskVersion: number, replayed: boolean): PutGraphCheckpointResult => ({
    taskId: thread.taskId,
    threadId: input.thread_id,
    checkpointNs: input.checkpoint_ns,
    checkpointId: input.checkpoint_id,
    forkedFrom,
    taskVersion,
    replayed,
  });
  const stored = await findGraphCheckpoint(db, thread.taskId, input.checkpoint_ns, input.checkpoint_id);
  if (stored) return replayOrRefuse(stored, contentDigest, result);
  let forkedFrom: string | null = null;
  try {
    return await writeThroughTask(
      db,
      thread.taskId,
      {
        reason: `LangGraph checkpoint ${input.checkpoint_id}${input.checkpoint_ns ? ` (namespace ${input.checkpoint_ns})` : ""}`,
        fencingToken: input.fencing_token,
        actor,
      },
      async (tx, transition) => {
        const taskVersion = transition.task.version;
        await insertGraphCheckpoint(tx, {
          taskId: thread.taskId,
          checkpointNs: input.checkpoint_ns,
          checkpointId: input.checkpoint_id,
          parentCheckpointId: input.parent_checkpoint_id ?? null,
          forkedFrom,
          checkpoint: input.checkpoint,
          channelVersions: input.channel_versions,
          metadata: input.metadata,
          blobs: input.blobs,
          contentDigest,
          taskVersion,
          createdBy: actor.identity,
          createdAt: transition.transition.createdAt,
        });
        await appendAuditEntry(
          tx,
          graphCheckpointAuditEntry({
            taskId: thread.taskId,
            threadId: input.thread_id,
            checkpointNs: input.checkpoint_ns,
            checkpointId: input.checkpoint_id,
            parentCheckpointId: input.parent_checkpoint_id ?? null,
            forkedFrom,
            contentDigest,
            metadata: input.metadata,
            taskVersion,
            actor,
            at: transition.transition.createdAt,
          }),
        );
        return result(forkedFrom, taskVersion, false);
      },
      // Read inside the transaction, before its CAS: a put that moves the
      // head after this read takes a task version this CAS then misses.
      async (tx) => {
        const decision = decideParent(
          await findGraphHead(tx, thread.taskId, input.checkpoint_ns),
          input.parent_checkpoint_id,
          input.fork,
        );
        if (decision.kind === "refused")
          throw new AppError("invariant_violated", decision.message, {
            violations: [{ invariant: "graph_history_linear", message: decision.message }],
          });
        forkedFrom = decision.kind === "fork" ? decision.forkedFrom : null;
      },
    );
  } catch (error) {
    // Two puts of the same checkpoint at once (a retry racing its first try): the loser answers as a replay.
    const raced = await findGraphCheckpoint(db, thread.taskId, input.checkpoint_ns, input.checkpoint_id);
    if (raced) return replayOrRefuse(raced, contentDigest, result);
    throw error;
  }
}

function replayOrRefuse(
  stored: { contentDigest: string; forkedFrom: string | null; taskVersion: number; checkpointId: string },
  contentDigest: string,
  result: (forkedFrom: string | null, taskVersion: number, replayed: boolean) => PutGraphCheckpointResult,
): PutGraphCheckpointResult {
  if (stored.contentDigest !== contentDigest)
    throw new AppError(
      "idempotency_conflict",
      `Checkpoint ${stored.checkpointId} is already stored with other content; a checkpoint id names one checkpoint.`,
    );
  return result(stored.forkedFrom, stored.taskVersion, true);
}
