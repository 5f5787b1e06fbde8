import { z } from "zod";
import type { Db } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { ExecutionStatus } from "@/lib/engine/execution-rules";
import type { Actor, TaskView, TransitionView } from "@/lib/engine/tasks";
import type { TaskState } from "@/lib/engine/task-state";
import type { CheckpointDocument, CheckpointTrigger } from "@/lib/engine/checkpoint-schema";
import type { CheckpointKeyring } from "@/lib/engine/checkpoint-keys";

/**
 * The owner of `checkpoints` and `checkpoint_restores`.
 *
 * Pure parts live beside it: the document schema and migrator
 * (checkpoint-schema.ts, importable by client components), canonical bytes
 * (checkpoint-canonical.ts), keys and signatures (checkpoint-keys.ts),
 * redaction (checkpoint-redaction.ts), verification (checkpoint-integrity.ts)
 * and the rules of a restore plan (checkpoint-restore-rules.ts).
 */
export { checkpointTriggers, checkpointTriggerDescriptions, type CheckpointTrigger, type CheckpointDocument } from "@/lib/engine/checkpoint-schema";

const clientId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "must be 1-128 characters: letters, digits, . _ : -");

export const CreateCheckpointInputSchema = z.strictObject({
  /** The version you mean to capture; a task that moved on is a 409 rather than a checkpoint of something else. */
  expected_version: z.number().int().min(1).optional(),
  /** Retrying with the same id returns the first checkpoint and writes nothing. */
  checkpoint_id: clientId.optional(),
});
export type CreateCheckpointInput = z.input<typeof CreateCheckpointInputSchema>;

export const RestorePlanInputSchema = z.strictObject({
  /** Restore a checkpoint older than the committed state: the engineer's explicit choice. */
  rewind: z.boolean().default(false),
});
export type RestorePlanInput = z.input<typeof RestorePlanInputSchema>;

export const RestoreInputSchema = z.strictObject({
  /** The task version the plan was read at: a task that moved since is a 409, never a restore over newer state. */
  expected_version: z.number().int().min(1),
  rewind: z.boolean().default(false),
  reason: z.string().trim().min(1, "say why you restore").max(500),
  /** Retrying with the same id returns the first result and writes nothing. */
  restore_id: clientId.optional(),
});
export type RestoreInput = z.input<typeof RestoreInputSchema>;

export type IntegrityCheckName =
  | "payload_parses"
  | "payload_canonical"
  | "schema"
  | "snapshot_digest"
  | "signature"
  | "columns_match"
  | "snapshot_valid"
  | "workflow_compatible";

export interface IntegrityCheck {
  check: IntegrityCheckName;
  ok: boolean;
  /** In words, for the inspector: "signature FAILED: key k1 is unknown". */
  message: string;
}

export interface IntegrityReport {
  /** Every check passed. */
  ok: boolean;
  checks: IntegrityCheck[];
  /** The schema_version as stored; null when the payload could not be read. */
  storedSchemaVersion: string | null;
  /** Versions the document was upgraded from on read, oldest first. */
  upgradedFrom: string[];
}

export interface CheckpointSummary {
  id: string;
  taskId: string;
  stateVersion: number;
  schemaVersion: string;
  trigger: CheckpointTrigger;
  createdAt: Date;
  createdBy: string;
  keyId: string;
  snapshotDigest: string;
  /** The task's status in the snapshot; null when the payload is unreadable. */
  snapshotStatus: string | null;
  integrity: IntegrityReport;
}

export type DiffKind = "added" | "removed" | "changed";

export interface StateDiffEntry {
  /** e.g. `gates.plan_approved`, `subtasks[issue-refund].status`, `artifacts.code_files`. */
  path: string;
  kind: DiffKind;
  /** Absent for `added`. */
  before?: unknown;
  /** Absent for `removed`. */
  after?: unknown;
}

export interface CheckpointDetail {
  summary: CheckpointSummary;
  /** The document (upgraded to v2, with its signature); null when the payload cannot be read. */
  document: CheckpointDocument | null;
  integrity: IntegrityReport;
  task: TaskView;
  /** before = the checkpoint's snapshot, after = the task's current state. Empty when the document is unreadable. */
  diffToCurrent: StateDiffEntry[];
}

export const restoreRefusalCodes = [
  "corrupt",
  "incompatible",
  "stale",
  "current",
  "terminal",
  "diverged",
  "unreconciled",
  "awaiting_human",
  "invalid_state",
  "version_conflict",
] as const;
export type RestoreRefusalCode = (typeof restoreRefusalCodes)[number];

export interface RestoreRefusal {
  code: RestoreRefusalCode;
  message: string;
}

/** One execution of the task, as the plan classifies it. */
export interface PlannedEffect {
  executionId: string;
  toolCallId: string;
  tool: string;
  irreversible: boolean;
  status: ExecutionStatus;
  idempotencyKey: string;
  /** What resuming after the restore does with it, in words. */
  action: string;
}

export interface RestoreEffects {
  /** A receipt exists: resuming gets the recorded result, the tool is not called again. */
  skippedByReceipt: PlannedEffect[];
  /** Sent, outcome unknown: the reconciler asks the provider first. Blocks the restore. */
  needsReconciliation: PlannedEffect[];
  /** Frozen for people (NEEDS_HUMAN, open review). Blocks the restore. */
  needsHuman: PlannedEffect[];
  /** Failed for certain, or never sent: a new attempt with the same idempotency key is safe. */
  retrySameKey: PlannedEffect[];
  /** Cancelled: never retried. */
  cancelled: PlannedEffect[];
}

export interface RestoreReauthorization {
  budget: {
    /** What the checkpoint says was consumed: never restored below what is spent now. */
    checkpoint: { currency_usd: number; tokens: number; hops: number };
    current: { currency_usd: number; tokens: number; hops: number };
    /** After the restore: the greater of the two, field by field (money spent stays spent). */
    resulting: { currency_usd: number; tokens: number; hops: number };
    /** The commitment (limit) is always the current one, never the checkpoint's. */
    committedUsd: number;
  };
  workflow: { checkpointDigest: string | null; currentDigest: string; name: string; version: number; compatible: boolean };
  policyVersion: { checkpoint: string | null; current: string; changed: boolean };
  /** Credentials are never in a checkpoint: workers present their own tokens after the restore. */
  credentials: string;
}

export interface RestoreLeasePlan {
  /** A live lease at planning time. */
  active: boolean;
  holder: string | null;
  fencingToken: string | null;
  expiresAt: Date | null;
  /** `fence`: the restore expires it and raises its token, so the old holder's writes are refused. */
  action: "fence" | "none";
}

export type RestoreKind = "rewind" | "roll_forward" | "none";

export interface RestorePlan {
  checkpointId: string;
  taskId: string;
  /** rewind: to an older version; roll_forward: to a newer one (a standby catching up); none: refused before that mattered. */
  kind: RestoreKind;
  rewind: boolean;
  allowed: boolean;
  refusal: RestoreRefusal | null;
  /** For a corrupt or incompatible checkpoint: the newest earlier checkpoint of the task that verifies. */
  fallbackCheckpointId: string | null;
  /** Said in words when there is no fallback. */
  fallbackMessage: string | null;
  integrity: IntegrityReport;
  current: { version: number; status: string };
  checkpoint: { stateVersion: number; status: string | null; trigger: CheckpointTrigger; createdAt: Date };
  effects: RestoreEffects;
  reauthorization: RestoreReauthorization;
  lease: RestoreLeasePlan;
  /** The state the restore would write (version = current + 1); null when refused before it could be built. */
  resultingState: TaskState | null;
  /** before = the current state, after = resultingState. */
  diff: StateDiffEntry[];
}

export type RestoreOutcome = "applied" | "refused";

export interface CheckpointRestoreView {
  id: string;
  taskId: string;
  checkpointId: string;
  outcome: RestoreOutcome;
  rewind: boolean;
  fromVersion: number;
  toVersion: number | null;
  transitionId: string | null;
  refusal: RestoreRefusalCode | null;
  plan: RestorePlan;
  actor: string;
  reason: string;
  createdAt: Date;
}

export interface RestoreResult {
  plan: RestorePlan;
  task: TaskView;
  transition: TransitionView;
  restore: CheckpointRestoreView;
  /** True when this restore_id was already applied: nothing was written now. */
  replayed: boolean;
}

export interface CheckpointOptions {
  /** Signing keys; the configured keyring (lib/env.ts) when absent. Tests rotate keys through this. */
  keyring?: CheckpointKeyring;
}

/** A checkpoint of the task's current committed state, on request. */
export async function createCheckpoint(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<{ checkpoint: CheckpointSummary; created: boolean }> {
  void db, taskId, raw, actor, options;
  throw notYet();
}

/** The task's checkpoints, oldest first, each verified. */
export async function listCheckpoints(db: Db, taskId: string, options: CheckpointOptions = {}): Promise<CheckpointSummary[]> {
  void db, taskId, options;
  throw notYet();
}

export async function getCheckpointDetail(db: Db, checkpointId: string, options: CheckpointOptions = {}): Promise<CheckpointDetail> {
  void db, checkpointId, options;
  throw notYet();
}

export async function verifyCheckpoint(db: Db, checkpointId: string, options: CheckpointOptions = {}): Promise<IntegrityReport> {
  void db, checkpointId, options;
  throw notYet();
}

/** The dry run: what restoring would do. Writes nothing. */
export async function planRestore(db: Db, checkpointId: string, raw: unknown, actor: Actor, options: CheckpointOptions = {}): Promise<RestorePlan> {
  void db, checkpointId, raw, actor, options;
  throw notYet();
}

/**
 * Applies a restore as a new transition (version n+1), or refuses it; both
 * are recorded in checkpoint_restores. Refusals throw AppError
 * (invariant_violated with the refusal code as the invariant,
 * version_conflict for a stale expected_version).
 */
export async function restoreCheckpoint(db: Db, checkpointId: string, raw: unknown, actor: Actor, options: CheckpointOptions = {}): Promise<RestoreResult> {
  void db, checkpointId, raw, actor, options;
  throw notYet();
}

/** Every restore attempt on the task, newest first. */
export async function listRestores(db: Db, taskId: string): Promise<CheckpointRestoreView[]> {
  void db, taskId;
  throw notYet();
}

function notYet(): AppError {
  return new AppError("invariant_violated", "Checkpoints are being built.");
}
