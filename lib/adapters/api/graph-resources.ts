import { z } from "zod";
import { SerializedValueSchema } from "@/lib/model/graph/graph-checkpoint";
import type { GraphCheckpointTuple } from "@/lib/stores/graph-checkpoints";
import type { GraphThreadResult } from "@/lib/use-cases/graph/ensure-graph-thread";
import type { PutGraphCheckpointResult } from "@/lib/use-cases/graph/put-graph-checkpoint";

/**
 * The LangGraph thread resources of /api/v1/graph (VeritySaver's wire
 * format): a thread and its task, a put's answer, and checkpoint tuples
 * with their channel values and pending writes, values as LangGraph's
 * serializer wrote them (type tag and base64 bytes).
 */
export const GraphThreadResourceSchema = z.object({
  task_id: z.string(),
  namespace: z.string(),
  thread_id: z.string(),
  workflow: z.string(),
  task_version: z.int(),
  created: z.boolean(),
});

export function graphThreadResource(r: GraphThreadResult): z.infer<typeof GraphThreadResourceSchema> {
  return {
    task_id: r.task.id,
    namespace: r.namespace,
    thread_id: r.threadId,
    workflow: r.task.workflow.name,
    task_version: r.task.version,
    created: r.created,
  };
}

export const GraphPutResultSchema = z.object({
  task_id: z.string(),
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  forked_from: z.string().nullable().meta({ description: "The older checkpoint an explicit replay branched from." }),
  task_version: z.int(),
  replayed: z.boolean(),
});

export function graphPutResultResource(r: PutGraphCheckpointResult): z.infer<typeof GraphPutResultSchema> {
  return {
    task_id: r.taskId,
    thread_id: r.threadId,
    checkpoint_ns: r.checkpointNs,
    checkpoint_id: r.checkpointId,
    forked_from: r.forkedFrom,
    task_version: r.taskVersion,
    replayed: r.replayed,
  };
}

export const GraphCheckpointTupleSchema = z.object({
  task_id: z.string(),
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  parent_checkpoint_id: z.string().nullable(),
  forked_from: z.string().nullable(),
  checkpoint: SerializedValueSchema,
  metadata: z.record(z.string(), z.unknown()),
  task_version: z.int(),
  created_by: z.string(),
  created_at: z.iso.datetime(),
  channel_values: z.array(z.object({ channel: z.string(), value: SerializedValueSchema })),
  pending_writes: z.array(
    z.object({
      graph_task_id: z.string(),
      task_path: z.string(),
      idx: z.int(),
      channel: z.string(),
      value: SerializedValueSchema,
    }),
  ),
});
export type GraphCheckpointTupleResource = z.infer<typeof GraphCheckpointTupleSchema>;

export const GraphCheckpointPageSchema = z.object({
  items: z.array(GraphCheckpointTupleSchema),
  next_cursor: z.string().nullable(),
});

export function graphCheckpointTupleResource(t: GraphCheckpointTuple): GraphCheckpointTupleResource {
  return {
    task_id: t.taskId,
    thread_id: t.threadId,
    checkpoint_ns: t.checkpointNs,
    checkpoint_id: t.checkpointId,
    parent_checkpoint_id: t.parentCheckpointId,
    forked_from: t.forkedFrom,
    checkpoint: t.checkpoint,
    metadata: t.metadata,
    task_version: t.taskVersion,
    created_by: t.createdBy,
    created_at: t.createdAt.toISOString(),
    channel_values: t.channelValues,
    pending_writes: t.pendingWrites.map((w) => ({
      graph_task_id: w.graphTaskId,
      task_path: w.taskPath,
      idx: w.idx,
      channel: w.channel,
      value: w.value,
    })),
  };
}
