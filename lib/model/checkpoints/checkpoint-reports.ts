import type { CheckpointTrigger, IntegrityCheckName } from "@/lib/model/checkpoints/checkpoint-schema";

/** What verifying a stored checkpoint reports (checkpoint-integrity.ts), check by check. */
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
