import {
  BaseCheckpointSaver,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { sleep } from "@/lib/core/sleep";
import { VerityClient } from "../client";
import { isVerityApiError } from "../errors";
import type { GraphCheckpointTuple } from "../graph-types";

export interface VeritySaverOptions {
  /** Where Verity runs, e.g. http://localhost:3000 */
  baseUrl: string;
  /** An agent's API token: its threads are its tasks, its scopes apply. */
  token: string;
  /** Keeps this saver's threads apart from another's with the same thread ids; default "". */
  namespace?: string;
  /** The workflow of a new thread's task (it must be in the token's scopes); default agent-task. */
  workflow?: string;
  /** How long this process's lease on a thread lasts between writes; renewed as it writes. Default 60 s. */
  leaseTtlSeconds?: number;
  /**
   * How long a write waits for another worker's lease on the thread to end
   * (a crashed worker's lease runs out; a live one is renewed and never
   * does). Default 0: refused at once, naming the holder.
   */
  waitForLeaseMs?: number;
  serde?: SerializerProtocol;
  /** The HTTP client; default one built from baseUrl and token. */
  client?: VerityClient;
}

interface ThreadLease {
  taskId: string;
  fencingToken: string;
  expiresAt: number;
}

const EMPTY = "empty";
const MAX_REMEMBERED_REPLAYS = 10_000;

/**
 * LangGraph's checkpointer over Verity's API: a thread is a Verity task, and
 * every put, every pending write and a thread's deletion is a
 * compare-and-swap of that task, fenced by this process's lease on it and
 * chained into its audit log (lib/use-cases/graph/ on the server).
 *
 * Single writer per thread: the first write of a thread takes its lease,
 * later writes carry its fencing token, and another worker's writes are
 * refused while the lease lives (the gap langgraph#8796 leaves open). Each
 * put names the checkpoint it continued from; the server refuses one whose
 * parent is no longer the head (a stale read), and records as a fork one
 * that continues from a checkpoint this saver was asked for by id (a replay
 * the user chose).
 *
 * Channel versions are `<32-digit counter>.<16 hex>`: increasing like
 * LangGraph's integers and unique across forks (langgraphjs#1812).
 */
export class VeritySaver extends BaseCheckpointSaver {
  readonly namespace: string;
  private readonly client: VerityClient;
  private readonly workflow: string | undefined;
  private readonly leaseTtlSeconds: number;
  private readonly waitForLeaseMs: number;
  private readonly leases = new Map<string, Promise<ThreadLease>>();
  /** Checkpoints asked for by id: a put continuing from one of them is a replay the user chose. */
  private readonly replays = new Set<string>();

  constructor(options: VeritySaverOptions) {
    super(options.serde);
    this.namespace = options.namespace ?? "";
    this.client = options.client ?? new VerityClient({ baseUrl: options.baseUrl, token: options.token });
    this.workflow = options.workflow;
    this.leaseTtlSeconds = options.leaseTtlSeconds ?? 60;
    this.waitForLeaseMs = options.waitForLeaseMs ?? 0;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const checkpointNs = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId) this.rememberReplay(threadId, checkpointNs, checkpointId);
    const page = await this.client.listGraphCheckpoints({
      namespace: this.namespace,
      thread_id: threadId,
      checkpoint_ns: checkpointNs,
      checkpoint_id: checkpointId,
      limit: 1,
    });
    const item = page.items[0];
    return item ? this.toTuple(item) : undefined;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    let remaining = options?.limit;
    let cursor: string | undefined;
    do {
      const page = await this.client.listGraphCheckpoints({
        namespace: this.namespace,
        thread_id: config.configurable?.thread_id as string | undefined,
        checkpoint_ns: config.configurable?.checkpoint_ns as string | undefined,
        checkpoint_id: (config.configurable?.checkpoint_id as string | undefined) || undefined,
        before: (options?.before?.configurable?.checkpoint_id as string | undefined) || undefined,
        filter: options?.filter,
        limit: Math.min(remaining ?? 100, 100),
        cursor,
      });
      for (const item of page.items) {
        if (remaining !== undefined && remaining <= 0) return;
        yield await this.toTuple(item);
        if (remaining !== undefined) remaining -= 1;
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor && (remaining === undefined || remaining > 0));
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined)
      throw new Error(
        'VeritySaver.put: the config has no configurable.thread_id. Pass one: graph.invoke(input, { configurable: { thread_id: "..." } })',
      );
    const checkpointNs = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parent = (config.configurable?.checkpoint_id as string | undefined) || undefined;
    const copy = copyCheckpoint(checkpoint);
    const values = copy.channel_values;
    // The values travel as blobs of the channels this step changed; the document without them.
    const [checkpointType, checkpointBytes] = await this.serde.dumpsTyped({ ...copy, channel_values: {} });
    const blobs = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => {
        const [type, bytes] =
          channel in values ? await this.serde.dumpsTyped(values[channel]) : [EMPTY, new Uint8Array()];
        return { channel, version: String(version), value: { type, data: base64(bytes) } };
      }),
    );
    const lease = await this.leaseOf(threadId);
    await this.client.putGraphCheckpoint(
      {
        namespace: this.namespace,
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpoint.id,
        ...(parent ? { parent_checkpoint_id: parent } : {}),
        fork: parent !== undefined && this.replays.has(replayKey(threadId, checkpointNs, parent)),
        checkpoint: { type: checkpointType, data: base64(checkpointBytes) },
        channel_versions: Object.fromEntries(Object.entries(copy.channel_versions).map(([k, v]) => [k, String(v)])),
        metadata: await this.jsonOf(metadata),
        blobs,
      },
      lease.fencingToken,
    );
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (threadId === undefined) throw new Error("VeritySaver.putWrites: the config has no configurable.thread_id.");
    if (!checkpointId) throw new Error("VeritySaver.putWrites: the config has no configurable.checkpoint_id.");
    if (writes.length === 0) return;
    const serialized = await Promise.all(
      writes.map(async ([channel, value], index) => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        return { idx: WRITES_IDX_MAP[channel] ?? index, channel, value: { type, data: base64(bytes) } };
      }),
    );
    const lease = await this.leaseOf(threadId);
    await this.client.putGraphWrites(
      {
        namespace: this.namespace,
        thread_id: threadId,
        checkpoint_ns: (config.configurable?.checkpoint_ns as string | undefined) ?? "",
        checkpoint_id: checkpointId,
        graph_task_id: taskId,
        task_path: taskPath ?? "",
        writes: serialized,
      },
      lease.fencingToken,
    );
  }

  /** With this process's lease when it holds one; a thread Verity never saw is already deleted. */
  async deleteThread(threadId: string): Promise<void> {
    const held = this.leases.has(threadId) ? await this.leaseOf(threadId) : undefined;
    try {
      await this.client.deleteGraphThread({ namespace: this.namespace, threadId }, held?.fencingToken);
    } catch (error) {
      if (isVerityApiError(error) && error.status === 404) return;
      throw error;
    }
  }

  // Declared as LangGraph's number versions, because graphs are typed
  // against BaseCheckpointSaver<number>; the versions are strings at run
  // time, which LangGraph compares as such (compareChannelVersions).
  override getNextVersion(current: number | string | undefined): number {
    const counter =
      current === undefined ? 0 : typeof current === "number" ? current : Number.parseInt(String(current), 10) || 0;
    const unique = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join(
      "",
    );
    return `${String(counter + 1).padStart(32, "0")}.${unique}` as unknown as number;
  }

  /** Gives up this process's lease on a thread: another worker may write it at once. */
  async releaseThread(threadId: string): Promise<void> {
    const held = this.leases.get(threadId);
    if (!held) return;
    this.leases.delete(threadId);
    const lease = await held.catch(() => null);
    if (lease) await this.client.releaseLease(lease.taskId, lease.fencingToken).catch(() => undefined);
  }

  /** Releases every thread this saver holds. */
  async close(): Promise<void> {
    await Promise.all([...this.leases.keys()].map((threadId) => this.releaseThread(threadId)));
  }

  /** The Verity task of a thread this saver has written (undefined before its first write). */
  async taskIdOf(threadId: string): Promise<string | undefined> {
    return (await this.leases.get(threadId)?.catch(() => undefined))?.taskId;
  }

  // ── internals ──────────────────────────────────────────────────────────

  /** This process's live lease on the thread: taken at its first write, renewed past half its life. */
  private leaseOf(threadId: string): Promise<ThreadLease> {
    const held = this.leases.get(threadId);
    const next = (async (): Promise<ThreadLease> => {
      const current = held ? await held.catch(() => null) : null;
      if (current && current.expiresAt - Date.now() > (this.leaseTtlSeconds * 1000) / 2) return current;
      if (current) {
        try {
          const renewed = await this.client.renewLease(current.taskId, current.fencingToken, {
            ttlSeconds: this.leaseTtlSeconds,
          });
          return { ...current, expiresAt: Date.parse(renewed.expires_at) };
        } catch (error) {
          if (!isVerityApiError(error) || error.status !== 409) throw error;
          // Lost (expired and taken): take it again below, which another live holder refuses.
        }
      }
      const thread = await this.client.ensureGraphThread({
        namespace: this.namespace,
        threadId,
        ...(this.workflow ? { workflow: this.workflow } : {}),
      });
      return this.acquire(thread.task_id);
    })();
    this.leases.set(threadId, next);
    // A failed acquisition is not kept: the next write tries again.
    next.catch(() => {
      if (this.leases.get(threadId) === next) this.leases.delete(threadId);
    });
    return next;
  }

  private async acquire(taskId: string): Promise<ThreadLease> {
    const deadline = Date.now() + this.waitForLeaseMs;
    for (;;) {
      try {
        const lease = await this.client.acquireLease(taskId, { ttlSeconds: this.leaseTtlSeconds });
        return { taskId, fencingToken: lease.fencing_token, expiresAt: Date.parse(lease.expires_at) };
      } catch (error) {
        if (!isVerityApiError(error) || error.status !== 409 || Date.now() >= deadline) throw error;
        await sleep(Math.min(1_000, Math.max(50, deadline - Date.now())));
      }
    }
  }

  private rememberReplay(threadId: string, checkpointNs: string, checkpointId: string): void {
    if (this.replays.size >= MAX_REMEMBERED_REPLAYS) this.replays.clear();
    this.replays.add(replayKey(threadId, checkpointNs, checkpointId));
  }

  /** Metadata as the serializer writes it, as JSON: Verity filters on it. */
  private async jsonOf(metadata: CheckpointMetadata): Promise<Record<string, unknown>> {
    const [, bytes] = await this.serde.dumpsTyped(metadata);
    return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  }

  private async toTuple(item: GraphCheckpointTuple): Promise<CheckpointTuple> {
    const checkpoint = (await this.serde.loadsTyped(
      item.checkpoint.type,
      fromBase64(item.checkpoint.data),
    )) as Checkpoint;
    checkpoint.channel_values = {};
    for (const { channel, value } of item.channel_values)
      if (value.type !== EMPTY)
        checkpoint.channel_values[channel] = await this.serde.loadsTyped(value.type, fromBase64(value.data));
    const ordered = inWritesOrder(item.pending_writes);
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      ordered.map(async (w): Promise<CheckpointPendingWrite> => [
        w.graph_task_id,
        w.channel,
        await this.serde.loadsTyped(w.value.type, fromBase64(w.value.data)),
      ]),
    );
    const configurable = { thread_id: item.thread_id, checkpoint_ns: item.checkpoint_ns };
    if (checkpoint.v < 4 && item.parent_checkpoint_id)
      await this.migratePendingSends(checkpoint, item.thread_id, item.checkpoint_ns, item.parent_checkpoint_id);
    return {
      config: { configurable: { ...configurable, checkpoint_id: item.checkpoint_id } },
      checkpoint,
      metadata: (await this.serde.loadsTyped("json", JSON.stringify(item.metadata))) as CheckpointMetadata,
      pendingWrites,
      ...(item.parent_checkpoint_id
        ? { parentConfig: { configurable: { ...configurable, checkpoint_id: item.parent_checkpoint_id } } }
        : {}),
    };
  }

  /** Checkpoints before format 4 kept pending sends as the parent's TASKS writes; LangGraph reads them as a channel. */
  private async migratePendingSends(
    checkpoint: Checkpoint,
    threadId: string,
    checkpointNs: string,
    parentId: string,
  ): Promise<void> {
    const page = await this.client.listGraphCheckpoints({
      namespace: this.namespace,
      thread_id: threadId,
      checkpoint_ns: checkpointNs,
      checkpoint_id: parentId,
      limit: 1,
    });
    const sends = page.items[0]?.pending_writes.filter((w) => w.channel === TASKS) ?? [];
    checkpoint.channel_values[TASKS] = await Promise.all(
      inWritesOrder(sends).map((w) => this.serde.loadsTyped(w.value.type, fromBase64(w.value.data))),
    );
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

/** Pending writes in LangGraph's canonical order (task path, task id, index), however the server returned them. */
function inWritesOrder(writes: GraphCheckpointTuple["pending_writes"]): GraphCheckpointTuple["pending_writes"] {
  return [...writes].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.task_path, a.graph_task_id, a.idx),
      writesSortKey(b.task_path, b.graph_task_id, b.idx),
    ),
  );
}

function replayKey(threadId: string, checkpointNs: string, checkpointId: string): string {
  return JSON.stringify([threadId, checkpointNs, checkpointId]);
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(data: string): Uint8Array {
  return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
}
