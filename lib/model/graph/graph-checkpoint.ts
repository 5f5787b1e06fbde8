import { z } from "zod";
import { sha256Hex } from "@/lib/core/canonical-json";
import { boundedJson } from "@/lib/core/json-bounds";

/**
 * LangGraph threads kept by Verity (the server side of sdk/langgraph/'s
 * VeritySaver), as pure rules: what a put, a write and a read may carry,
 * which Verity task a thread is, and whether a put continues its thread or
 * forks it.
 *
 * Serialized values (checkpoint documents, channel values, pending writes)
 * are LangGraph's own serializer output, opaque here: a type tag and base64
 * bytes. Only what Verity reads is plain JSON: metadata (list filters) and
 * the channel versions (which blobs make a checkpoint's channel values).
 */

/** Keeps one saver's threads apart from another's (the conformance suite runs isolated instances). */
export const GraphNamespaceSchema = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9._:-]*$/, "letters, digits, . _ : - only (may be empty)");
const threadIdSchema = z.string().min(1).max(512);
const checkpointNsSchema = z.string().max(512);
const checkpointIdSchema = z.string().min(1).max(128);
const fencingTokenSchema = z.string().regex(/^[0-9]{1,18}$/, "must be the decimal fencing token of your lease");

/** LangGraph's serializer output: its type tag and the bytes, base64. */
export const SerializedValueSchema = z.strictObject({
  type: z.string().min(1).max(64),
  data: z.base64(),
});
export type SerializedValue = z.infer<typeof SerializedValueSchema>;

/** Channel name → the version a checkpoint holds it at (LangGraph's versions, as strings). */
const channelVersionsSchema = z.record(z.string().min(1).max(256), z.string().min(1).max(128));

export const EnsureGraphThreadInputSchema = z.strictObject({
  namespace: GraphNamespaceSchema.default(""),
  thread_id: threadIdSchema,
  /** The registered workflow the thread's task runs under (its token scope applies). */
  workflow: z.string().min(1).max(64).default("agent-task"),
});

export const PutGraphCheckpointInputSchema = z.strictObject({
  namespace: GraphNamespaceSchema.default(""),
  thread_id: threadIdSchema,
  checkpoint_ns: checkpointNsSchema.default(""),
  checkpoint_id: checkpointIdSchema,
  /** The checkpoint this one continued from (LangGraph's config.checkpoint_id); absent for a thread's first. */
  parent_checkpoint_id: checkpointIdSchema.optional(),
  /** The caller replays from an earlier checkpoint on purpose: continuing from a non-head parent is a recorded fork. */
  fork: z.boolean().default(false),
  checkpoint: SerializedValueSchema,
  channel_versions: channelVersionsSchema,
  metadata: boundedJson(z.record(z.string(), z.unknown())),
  /** The values of the channels this put changed (LangGraph's newVersions), each at its new version. */
  blobs: z
    .array(
      z.strictObject({
        channel: z.string().min(1).max(256),
        version: z.string().min(1).max(128),
        value: SerializedValueSchema,
      }),
    )
    .max(2000),
  fencing_token: fencingTokenSchema.optional(),
});

export const PutGraphWritesInputSchema = z.strictObject({
  namespace: GraphNamespaceSchema.default(""),
  thread_id: threadIdSchema,
  checkpoint_ns: checkpointNsSchema.default(""),
  checkpoint_id: checkpointIdSchema,
  /** LangGraph's task id (not a Verity task). */
  graph_task_id: z.string().min(1).max(256),
  task_path: z.string().max(1024).default(""),
  writes: z
    .array(
      z.strictObject({
        /** LangGraph's index: the write's position, or a negative slot for errors, interrupts and resumes. */
        idx: z.number().int().min(-1000).max(100_000),
        channel: z.string().min(1).max(256),
        value: SerializedValueSchema,
      }),
    )
    .min(1)
    .max(2000),
  fencing_token: fencingTokenSchema.optional(),
});

export const ListGraphCheckpointsQuerySchema = z.strictObject({
  namespace: GraphNamespaceSchema.default(""),
  thread_id: threadIdSchema.optional(),
  checkpoint_ns: checkpointNsSchema.optional(),
  checkpoint_id: checkpointIdSchema.optional(),
  /** Only checkpoints whose id sorts before this one (LangGraph's ids are time-ordered). */
  before: checkpointIdSchema.optional(),
  /** Metadata members that must equal these values, as JSON. */
  filter: z
    .string()
    .max(8192)
    .transform((text, ctx) => {
      try {
        const value: unknown = JSON.parse(text);
        if (value !== null && typeof value === "object" && !Array.isArray(value))
          return value as Record<string, unknown>;
      } catch {
        // worded below
      }
      ctx.addIssue({ code: "custom", message: 'must be a JSON object of metadata members, e.g. {"source":"loop"}' });
      return z.NEVER;
    })
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(2048).optional(),
});

export const DeleteGraphThreadInputSchema = z.strictObject({
  namespace: GraphNamespaceSchema.default(""),
  thread_id: threadIdSchema,
  fencing_token: fencingTokenSchema.optional(),
});

/**
 * The Verity task of a thread: derived, not stored first, so that two
 * savers racing to open a new thread create one task (the create is
 * idempotent by id). A digest, because a thread id may be any string and a
 * task id may not.
 */
export function graphThreadTaskId(namespace: string, threadId: string): string {
  return `lg-${sha256Hex(`${namespace}\u0000${threadId}`).slice(0, 40)}`;
}

export type ParentDecision =
  | { kind: "first" }
  | { kind: "continues" }
  | { kind: "fork"; forkedFrom: string }
  | { kind: "refused"; message: string };

/**
 * Whether a put may follow its namespace's head. A put that names the head
 * continues the thread; one that names another checkpoint is a fork: kept,
 * and marked, when the caller says it replays from there on purpose, and
 * refused otherwise, because then it was written from a stale read (two
 * writers on one thread: langgraph#8796's silent fork). A put with no
 * parent starts a history (a thread's first checkpoint, or a new root the
 * caller chose).
 */
export function decideParent(head: string | null, parent: string | undefined, fork: boolean): ParentDecision {
  if (parent === undefined) return { kind: "first" };
  if (head === null || parent === head) return { kind: "continues" };
  if (fork) return { kind: "fork", forkedFrom: parent };
  return {
    kind: "refused",
    message:
      `This checkpoint continues from ${parent}, but the thread's latest checkpoint is ${head}: ` +
      "another writer moved the thread since you read it. Read the thread again; to branch from an older " +
      "checkpoint on purpose, run the graph from that checkpoint_id (a replay is recorded as a fork).",
  };
}
