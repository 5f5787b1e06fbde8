import type { IntegrityReport, StateDiffEntry } from "@/lib/model/checkpoints/checkpoint-reports";
import type { CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import type { ExecutionStatus } from "@/lib/model/executions/execution-rules";
import type { TaskState } from "@/lib/model/tasks/task-state";

/** Every code a restore is refused with: the rules' (checkpoint-restore-rules.ts) and version_conflict, the restore's own check of expected_version. */
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
  workflow: {
    checkpointDigest: string | null;
    currentDigest: string;
    name: string;
    version: number;
    compatible: boolean;
  };
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

/** A restore attempt as checkpoint_restores records it, with the plan it was decided on. */
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
