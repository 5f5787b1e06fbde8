import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import { parseOrThrow } from "@/lib/core/validation";
import { ListGraphCheckpointsQuerySchema } from "@/lib/model/graph/graph-checkpoint";
import type { Principal } from "@/lib/model/permissions";
import { searchGraphCheckpoints, type GraphCheckpointTuple } from "@/lib/stores/graph-checkpoints";
import { requireGraphThreadReach, threadOwnerFilter } from "@/lib/use-cases/graph/graph-thread-reach";

// (checkpoint id, task id, checkpoint namespace); the namespace may be "", which keysetParts.text refuses.
const cursor = keysetCursor([keysetParts.text, keysetParts.text, z.string()], {
  notOurs: "not a cursor returned by this list",
  advice: "start again from the first page",
});

/**
 * LangGraph's list and getTuple: one thread's checkpoints, or (no thread)
 * every thread of the namespace the caller may reach, newest first, with
 * their channel values and pending writes; keyset-paged.
 */
export async function listGraphCheckpoints(
  db: Db,
  principal: Principal,
  rawQuery: unknown,
): Promise<{ items: GraphCheckpointTuple[]; nextCursor: string | null }> {
  const q = parseOrThrow(ListGraphCheckpointsQuerySchema, rawQuery);
  let taskId: string | undefined;
  if (q.thread_id !== undefined) {
    try {
      taskId = (await requireGraphThreadReach(db, principal, q.namespace, q.thread_id)).taskId;
    } catch {
      // A thread that does not exist, or is not the caller's, has no checkpoints (LangGraph's getTuple answers undefined).
      return { items: [], nextCursor: null };
    }
  }
  const items = await searchGraphCheckpoints(db, {
    namespace: q.namespace,
    threadId: q.thread_id,
    taskId,
    createdBy: taskId ? undefined : threadOwnerFilter(principal),
    checkpointNs: q.checkpoint_ns,
    checkpointId: q.checkpoint_id,
    before: q.before,
    filter: q.filter,
    after: q.cursor ? cursor.decode(q.cursor) : undefined,
    limit: q.limit + 1,
  });
  const page = items.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    items: page,
    nextCursor:
      items.length > q.limit && last ? cursor.encode([last.checkpointId, last.taskId, last.checkpointNs]) : null,
  };
}
