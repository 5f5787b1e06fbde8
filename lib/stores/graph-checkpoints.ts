import type { Db, Tx } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import type { GraphCheckpoint, GraphThread } from "@/lib/generated/prisma/client";
import type { SerializedValue } from "@/lib/model/graph/graph-checkpoint";

/**
 * The only writer of graph_threads, graph_checkpoints, graph_blobs and
 * graph_writes: LangGraph threads kept by Verity. Every write here runs in
 * the transaction of the task's compare-and-swap (lib/use-cases/graph/), so a
 * checkpoint exists exactly when its transition and audit entry do.
 */

const bytesOf = (value: SerializedValue): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(value.data, "base64"));
const serializedOf = (type: string, bytes: Uint8Array): SerializedValue => ({
  type,
  data: Buffer.from(bytes).toString("base64"),
});

export async function findGraphThread(db: Db | Tx, namespace: string, threadId: string): Promise<GraphThread | null> {
  return db.graphThread.findFirst({ where: { namespace, threadId } });
}

export async function findGraphThreadOfTask(db: Db | Tx, taskId: string): Promise<GraphThread | null> {
  return db.graphThread.findFirst({ where: { taskId } });
}

/** The thread's row; a second insert of the same thread (a racing saver) is a no-op. */
export async function insertGraphThread(
  db: Db | Tx,
  row: { taskId: string; namespace: string; threadId: string; createdBy: string },
): Promise<void> {
  await db.graphThread.createMany({ data: [row], skipDuplicates: true });
}

export async function findGraphCheckpoint(
  db: Db | Tx,
  taskId: string,
  checkpointNs: string,
  checkpointId: string,
): Promise<GraphCheckpoint | null> {
  return db.graphCheckpoint.findFirst({
    where: { taskId, checkpointNs, checkpointId },
  });
}

/** The namespace's head: the checkpoint put last (every put takes a new task version). */
export async function findGraphHead(db: Db | Tx, taskId: string, checkpointNs: string): Promise<string | null> {
  const head = await db.graphCheckpoint.findFirst({
    where: { taskId, checkpointNs },
    orderBy: { taskVersion: "desc" },
    select: { checkpointId: true },
  });
  return head?.checkpointId ?? null;
}

export interface NewGraphCheckpoint {
  taskId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  forkedFrom: string | null;
  checkpoint: SerializedValue;
  channelVersions: Record<string, string>;
  metadata: Record<string, unknown>;
  blobs: Array<{ channel: string; version: string; value: SerializedValue }>;
  contentDigest: string;
  taskVersion: number;
  createdBy: string;
  createdAt: Date;
}

export async function insertGraphCheckpoint(tx: Tx, c: NewGraphCheckpoint): Promise<void> {
  await tx.graphCheckpoint.create({
    data: {
      taskId: c.taskId,
      checkpointNs: c.checkpointNs,
      checkpointId: c.checkpointId,
      parentCheckpointId: c.parentCheckpointId,
      forkedFrom: c.forkedFrom,
      checkpointType: c.checkpoint.type,
      checkpoint: bytesOf(c.checkpoint),
      channelVersions: c.channelVersions,
      metadata: c.metadata as Prisma.InputJsonValue,
      contentDigest: c.contentDigest,
      taskVersion: c.taskVersion,
      createdBy: c.createdBy,
      createdAt: c.createdAt,
    },
  });
  // A channel version names one value: a blob already stored under it (a
  // fork that carries it again) is the same value, kept as first written.
  if (c.blobs.length > 0)
    await tx.graphBlob.createMany({
      data: c.blobs.map((b) => ({
        taskId: c.taskId,
        checkpointNs: c.checkpointNs,
        channel: b.channel,
        version: b.version,
        valueType: b.value.type,
        value: bytesOf(b.value),
      })),
      skipDuplicates: true,
    });
}

export interface NewGraphWrites {
  taskId: string;
  checkpointNs: string;
  checkpointId: string;
  graphTaskId: string;
  taskPath: string;
  writes: Array<{ idx: number; channel: string; value: SerializedValue }>;
  createdBy: string;
  createdAt: Date;
}

/**
 * LangGraph's rule for pending writes: a regular write (idx >= 0) is kept as
 * first written, so a task re-run after a crash cannot change what it
 * already recorded; a special one (idx < 0: error, interrupt, resume) is
 * replaced by the latest. Returns how many rows this call wrote.
 */
export async function upsertGraphWrites(tx: Tx, w: NewGraphWrites): Promise<number> {
  let written = 0;
  for (const write of w.writes) {
    const row = {
      taskId: w.taskId,
      checkpointNs: w.checkpointNs,
      checkpointId: w.checkpointId,
      graphTaskId: w.graphTaskId,
      idx: write.idx,
      taskPath: w.taskPath,
      channel: write.channel,
      valueType: write.value.type,
      value: bytesOf(write.value),
      createdBy: w.createdBy,
      createdAt: w.createdAt,
    };
    if (write.idx >= 0) {
      written += (await tx.graphWrite.createMany({ data: [row], skipDuplicates: true })).count;
    } else {
      // Replaced in place: the thread's one writer (its lease, and the task's
      // CAS in this same transaction) means no other call writes this key now.
      await tx.graphWrite.deleteMany({
        where: {
          taskId: w.taskId,
          checkpointNs: w.checkpointNs,
          checkpointId: w.checkpointId,
          graphTaskId: w.graphTaskId,
          idx: write.idx,
        },
      });
      await tx.graphWrite.createMany({ data: [row] });
      written += 1;
    }
  }
  return written;
}

/** A thread's checkpoints, channel values and writes removed (LangGraph's deleteThread); the task and its history stay. */
export async function deleteGraphThreadRows(
  tx: Tx,
  taskId: string,
): Promise<{ checkpoints: number; blobs: number; writes: number }> {
  const checkpoints = (await tx.graphCheckpoint.deleteMany({ where: { taskId } })).count;
  const blobs = (await tx.graphBlob.deleteMany({ where: { taskId } })).count;
  const writes = (await tx.graphWrite.deleteMany({ where: { taskId } })).count;
  return { checkpoints, blobs, writes };
}

export interface GraphCheckpointTuple {
  taskId: string;
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  forkedFrom: string | null;
  checkpoint: SerializedValue;
  metadata: Record<string, unknown>;
  taskVersion: number;
  createdBy: string;
  createdAt: Date;
  channelValues: Array<{ channel: string; value: SerializedValue }>;
  pendingWrites: Array<{ graphTaskId: string; taskPath: string; idx: number; channel: string; value: SerializedValue }>;
}

export interface GraphCheckpointSearch {
  namespace: string;
  threadId?: string;
  /** Only threads of these tasks' owner (an agent bound to its own tasks); absent: every thread. */
  createdBy?: string;
  /** Only these tasks (the console reads one task's thread). */
  taskId?: string;
  checkpointNs?: string;
  checkpointId?: string;
  before?: string;
  filter?: Record<string, unknown>;
  /** Keyset: strictly after this (checkpoint_id, task_id, checkpoint_ns) in the descending order. */
  after?: readonly [string, string, string];
  limit: number;
}

interface CheckpointRow {
  task_id: string;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  forked_from: string | null;
  checkpoint_type: string;
  checkpoint: Uint8Array;
  metadata: Record<string, unknown>;
  task_version: number;
  created_by: string;
  created_at: Date;
}

/**
 * Checkpoints newest first (LangGraph's ids are time-ordered uuid6, compared
 * byte by byte as LangGraph does, whatever the database's collation), each
 * with its channel values (the blobs its channel versions name) and its
 * pending writes. Three queries a page, whatever its size.
 */
export async function searchGraphCheckpoints(db: Db | Tx, q: GraphCheckpointSearch): Promise<GraphCheckpointTuple[]> {
  const conditions: Prisma.Sql[] = [Prisma.sql`t.namespace = ${q.namespace}`];
  if (q.threadId !== undefined) conditions.push(Prisma.sql`t.thread_id = ${q.threadId}`);
  if (q.createdBy !== undefined) conditions.push(Prisma.sql`t.created_by = ${q.createdBy}`);
  if (q.taskId !== undefined) conditions.push(Prisma.sql`c.task_id = ${q.taskId}`);
  if (q.checkpointNs !== undefined) conditions.push(Prisma.sql`c.checkpoint_ns = ${q.checkpointNs}`);
  if (q.checkpointId !== undefined) conditions.push(Prisma.sql`c.checkpoint_id = ${q.checkpointId}`);
  if (q.before !== undefined) conditions.push(Prisma.sql`c.checkpoint_id COLLATE "C" < ${q.before}`);
  if (q.filter !== undefined && Object.keys(q.filter).length > 0)
    conditions.push(Prisma.sql`c.metadata @> ${JSON.stringify(q.filter)}::jsonb`);
  if (q.after)
    conditions.push(
      Prisma.sql`(c.checkpoint_id COLLATE "C", c.task_id COLLATE "C", c.checkpoint_ns COLLATE "C") < (${q.after[0]}, ${q.after[1]}, ${q.after[2]})`,
    );
  const rows = await db.$queryRaw<CheckpointRow[]>`
    SELECT c.task_id, t.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.forked_from,
           c.checkpoint_type, c.checkpoint, c.metadata, c.task_version, c.created_by, c.created_at
      FROM graph_checkpoints c
      JOIN graph_threads t ON t.task_id = c.task_id
     WHERE ${Prisma.join(conditions, " AND ")}
     ORDER BY c.checkpoint_id COLLATE "C" DESC, c.task_id COLLATE "C" DESC, c.checkpoint_ns COLLATE "C" DESC
     LIMIT ${q.limit}`;
  if (rows.length === 0) return [];
  const keyOf = (taskId: string, ns: string, id: string) => JSON.stringify([taskId, ns, id]);
  const keys = rows.map((r) => Prisma.sql`(${r.task_id}, ${r.checkpoint_ns}, ${r.checkpoint_id})`);
  const blobs = await db.$queryRaw<
    Array<{
      task_id: string;
      checkpoint_ns: string;
      checkpoint_id: string;
      channel: string;
      value_type: string;
      value: Uint8Array;
    }>
  >`
    SELECT c.task_id, c.checkpoint_ns, c.checkpoint_id, b.channel, b.value_type, b.value
      FROM graph_checkpoints c
     CROSS JOIN LATERAL jsonb_each_text(c.channel_versions) AS v(channel, version)
      JOIN graph_blobs b ON b.task_id = c.task_id AND b.checkpoint_ns = c.checkpoint_ns
                        AND b.channel = v.channel AND b.version = v.version
     WHERE (c.task_id, c.checkpoint_ns, c.checkpoint_id) IN (${Prisma.join(keys)})`;
  const writes = await db.$queryRaw<
    Array<{
      task_id: string;
      checkpoint_ns: string;
      checkpoint_id: string;
      graph_task_id: string;
      task_path: string;
      idx: number;
      channel: string;
      value_type: string;
      value: Uint8Array;
    }>
  >`
    SELECT task_id, checkpoint_ns, checkpoint_id, graph_task_id, task_path, idx, channel, value_type, value
      FROM graph_writes
     WHERE (task_id, checkpoint_ns, checkpoint_id) IN (${Prisma.join(keys)})
     ORDER BY task_path, graph_task_id, idx`;
  const valuesByKey = new Map<string, GraphCheckpointTuple["channelValues"]>();
  for (const b of blobs) {
    const key = keyOf(b.task_id, b.checkpoint_ns, b.checkpoint_id);
    const list = valuesByKey.get(key) ?? [];
    list.push({ channel: b.channel, value: serializedOf(b.value_type, b.value) });
    valuesByKey.set(key, list);
  }
  const writesByKey = new Map<string, GraphCheckpointTuple["pendingWrites"]>();
  for (const w of writes) {
    const key = keyOf(w.task_id, w.checkpoint_ns, w.checkpoint_id);
    const list = writesByKey.get(key) ?? [];
    list.push({
      graphTaskId: w.graph_task_id,
      taskPath: w.task_path,
      idx: w.idx,
      channel: w.channel,
      value: serializedOf(w.value_type, w.value),
    });
    writesByKey.set(key, list);
  }
  return rows.map((r) => {
    const key = keyOf(r.task_id, r.checkpoint_ns, r.checkpoint_id);
    return {
      taskId: r.task_id,
      threadId: r.thread_id,
      checkpointNs: r.checkpoint_ns,
      checkpointId: r.checkpoint_id,
      parentCheckpointId: r.parent_checkpoint_id,
      forkedFrom: r.forked_from,
      checkpoint: serializedOf(r.checkpoint_type, r.checkpoint),
      metadata: r.metadata,
      taskVersion: r.task_version,
      createdBy: r.created_by,
      createdAt: r.created_at,
      channelValues: valuesByKey.get(key) ?? [],
      pendingWrites: writesByKey.get(key) ?? [],
    };
  });
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): a finished task's LangGraph thread, its row included (deleteThread keeps that). */
export async function deleteGraphThreadOfTask(
  tx: Tx,
  taskId: string,
): Promise<{ graph_writes: number; graph_blobs: number; graph_checkpoints: number; graph_threads: number }> {
  const rows = await deleteGraphThreadRows(tx, taskId);
  const graph_threads = (await tx.graphThread.deleteMany({ where: { taskId } })).count;
  return { graph_writes: rows.writes, graph_blobs: rows.blobs, graph_checkpoints: rows.checkpoints, graph_threads };
}
