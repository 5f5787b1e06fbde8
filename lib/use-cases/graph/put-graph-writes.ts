import type { Db } from "@/lib/db/client";
import { digestOf } from "@/lib/core/canonical-json";
import { parseOrThrow } from "@/lib/core/validation";
import { graphWritesAuditEntry } from "@/lib/model/audit/audit-events";
import { PutGraphWritesInputSchema } from "@/lib/model/graph/graph-checkpoint";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { upsertGraphWrites } from "@/lib/stores/graph-checkpoints";
import { requireGraphThreadReach } from "@/lib/use-cases/graph/graph-thread-reach";
import { writeThroughTask } from "@/lib/use-cases/graph/graph-write";

/**
 * LangGraph's putWrites: a graph task's pending writes against a
 * checkpoint, as a change of the thread's task (lease-fenced, audited).
 * The checkpoint need not be stored yet: LangGraph.js sends a step's puts
 * in the background, so its writes can arrive first.
 */
export async function putGraphWrites(
  db: Db,
  principal: Principal,
  rawInput: unknown,
): Promise<{ taskId: string; written: number; taskVersion: number }> {
  const input = parseOrThrow(PutGraphWritesInputSchema, rawInput);
  const thread = await requireGraphThreadReach(db, principal, input.namespace, input.thread_id, { drive: true });
  const actor = actorOf(principal);
  return writeThroughTask(
    db,
    thread.taskId,
    {
      reason: `LangGraph writes of ${input.graph_task_id} at checkpoint ${input.checkpoint_id}`,
      fencingToken: input.fencing_token,
      actor,
    },
    async (tx, transition) => {
      const at = transition.transition.createdAt;
      const written = await upsertGraphWrites(tx, {
        taskId: thread.taskId,
        checkpointNs: input.checkpoint_ns,
        checkpointId: input.checkpoint_id,
        graphTaskId: input.graph_task_id,
        taskPath: input.task_path,
        writes: input.writes,
        createdBy: actor.identity,
        createdAt: at,
      });
      await appendAuditEntry(
        tx,
        graphWritesAuditEntry({
          taskId: thread.taskId,
          threadId: input.thread_id,
          checkpointNs: input.checkpoint_ns,
          checkpointId: input.checkpoint_id,
          graphTaskId: input.graph_task_id,
          channels: [...new Set(input.writes.map((w) => w.channel))],
          contentDigest: digestOf(input.writes),
          taskVersion: transition.task.version,
          actor,
          at,
        }),
      );
      return { taskId: thread.taskId, written, taskVersion: transition.task.version };
    },
  );
}
