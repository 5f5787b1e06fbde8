import type { Db } from "@/lib/db/client";
import { findGraphThreadOfTask, searchGraphCheckpoints } from "@/lib/stores/graph-checkpoints";

export interface GraphCheckpointSummary {
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  forkedFrom: string | null;
  step: number | null;
  source: string | null;
  pendingWrites: number;
  /** The graph tasks whose writes wait at this checkpoint, and whether one of them is an interrupt. */
  interrupted: boolean;
  taskVersion: number;
  createdBy: string;
  createdAt: Date;
}

export interface GraphThreadOfTask {
  namespace: string;
  threadId: string;
  /** Newest first, at most `limit`. */
  checkpoints: GraphCheckpointSummary[];
  more: boolean;
}

/** The LangGraph thread a task keeps (VeritySaver), for the console: null for every other task. */
export async function graphThreadOfTask(db: Db, taskId: string, limit = 50): Promise<GraphThreadOfTask | null> {
  const thread = await findGraphThreadOfTask(db, taskId);
  if (!thread) return null;
  const tuples = await searchGraphCheckpoints(db, { namespace: thread.namespace, taskId, limit: limit + 1 });
  return {
    namespace: thread.namespace,
    threadId: thread.threadId,
    more: tuples.length > limit,
    checkpoints: tuples.slice(0, limit).map((t) => ({
      checkpointNs: t.checkpointNs,
      checkpointId: t.checkpointId,
      parentCheckpointId: t.parentCheckpointId,
      forkedFrom: t.forkedFrom,
      step: typeof t.metadata.step === "number" ? t.metadata.step : null,
      source: typeof t.metadata.source === "string" ? t.metadata.source : null,
      pendingWrites: t.pendingWrites.length,
      // LangGraph's interrupt channel: the graph stopped here for a person.
      interrupted: t.pendingWrites.some((w) => w.channel === "__interrupt__"),
      taskVersion: t.taskVersion,
      createdBy: t.createdBy,
      createdAt: t.createdAt,
    })),
  };
}
