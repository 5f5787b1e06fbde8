import type { Db } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import { graphThreadDeletedAuditEntry } from "@/lib/model/audit/audit-events";
import { DeleteGraphThreadInputSchema } from "@/lib/model/graph/graph-checkpoint";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { deleteGraphThreadRows } from "@/lib/stores/graph-checkpoints";
import { requireGraphThreadReach } from "@/lib/use-cases/graph/graph-thread-reach";
import { writeThroughTask } from "@/lib/use-cases/graph/graph-write";

/**
 * LangGraph's deleteThread: the thread's checkpoints, channel values and
 * writes are removed; its task, transitions and audit entries stay, with an
 * entry saying who deleted what. The thread may be written again afterwards.
 */
export async function deleteGraphThread(
  db: Db,
  principal: Principal,
  rawInput: unknown,
): Promise<{ taskId: string; checkpoints: number; blobs: number; writes: number }> {
  const input = parseOrThrow(DeleteGraphThreadInputSchema, rawInput);
  const thread = await requireGraphThreadReach(db, principal, input.namespace, input.thread_id, { drive: true });
  const actor = actorOf(principal);
  return writeThroughTask(
    db,
    thread.taskId,
    { reason: "LangGraph thread deleted", fencingToken: input.fencing_token, actor },
    async (tx, transition) => {
      const deleted = await deleteGraphThreadRows(tx, thread.taskId);
      await appendAuditEntry(
        tx,
        graphThreadDeletedAuditEntry({
          taskId: thread.taskId,
          threadId: input.thread_id,
          checkpointNs: "",
          taskVersion: transition.task.version,
          actor,
          at: transition.transition.createdAt,
          deleted,
        }),
      );
      return { taskId: thread.taskId, ...deleted };
    },
  );
}
