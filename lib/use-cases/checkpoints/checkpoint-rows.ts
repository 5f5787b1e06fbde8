import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Prisma, Checkpoint, CheckpointRestore } from "@/lib/generated/prisma/client";
import type { StoredCheckpoint, VerifiedCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { CheckpointTriggerSchema, type CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import { checkpointRestoreAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { openedCheckpoint } from "@/lib/stores/checkpoint-store";
import { readableJson, sealJson } from "@/lib/stores/field-encryption";
import { openTaskView, type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import {
  restoreRefusalCodes,
  type CheckpointRestoreView,
  type RestoreOutcome,
  type RestorePlan,
  type RestoreRefusalCode,
} from "@/lib/model/checkpoints/restore-plan";
import { getWorkflowByDigest } from "@/lib/model/workflows";

/**
 * The use cases in this folder, one per file, are the owner of `checkpoints`
 * and `checkpoint_restores`. This module holds what they share: reading a
 * checkpoint or task row, a row as the view they return, and insertRestore,
 * the one write of a `checkpoint_restores` row.
 *
 * Pure parts live in lib/model/checkpoints/: the document schema and migrator
 * (checkpoint-schema.ts, importable by client components), canonical bytes
 * (checkpoint-canonical.ts), keys and signatures (checkpoint-keys.ts),
 * redaction (checkpoint-redaction.ts), verification (checkpoint-integrity.ts),
 * the rules of a restore plan (checkpoint-restore-rules.ts) and the reports
 * and plans the use cases return (checkpoint-reports.ts, restore-plan.ts).
 */

export interface RestoreRecord {
  id: string;
  taskId: string;
  checkpointId: string;
  rewind: boolean;
  fromVersion: number;
  actor: Actor;
  reason: string;
  requestDigest: string;
  plan: RestorePlan;
  outcome: RestoreOutcome;
  toVersion?: number;
  transitionId?: string;
}

/**
 * The plan is kept as shown, except the resulting state: an applied
 * restore's state is its transition's state_after, and a refused one has
 * none. The request digest rides along to tell a retry from a different
 * request with the same restore_id. The diff quotes the task state's values
 * (free text among them): it is sealed whole, under the restore's id
 * (docs/encryption.md); the rest of the plan names versions, statuses,
 * budgets and ids.
 */
export async function insertRestore(tx: Tx, r: RestoreRecord): Promise<CheckpointRestore> {
  const plain = JSON.parse(JSON.stringify({ ...r.plan, resultingState: null })) as Record<string, unknown>;
  const stored = {
    ...plain,
    diff: r.plan.diff.length === 0 ? [] : await sealJson(tx, restorePlanContext(r.id), plain.diff),
    requestDigest: r.requestDigest,
  };
  const restore = await tx.checkpointRestore.create({
    data: {
      id: r.id,
      taskId: r.taskId,
      checkpointId: r.checkpointId,
      outcome: r.outcome,
      rewind: r.rewind,
      fromVersion: r.fromVersion,
      toVersion: r.toVersion ?? null,
      transitionId: r.transitionId ?? null,
      refusal: r.plan.refusal?.code ?? null,
      plan: stored as Prisma.InputJsonValue,
      actor: r.actor.identity,
      reason: r.reason,
    },
  });
  // Applied: task.restored in the task's chain, whose row the restore's CAS
  // holds (that CAS records nothing itself, so the change has one entry).
  // Refused: the transaction's last write, in the checkpoint's chain.
  await appendAuditEntry(tx, checkpointRestoreAuditEntry(restore, r.actor));
  return restore;
}

function restorePlanContext(restoreId: string): string {
  return `checkpoint_restores.plan:${restoreId}`;
}

/** The plan as shown, its diff opened; a diff whose key is gone reads `[sealed value, unreadable: …]` in its one entry. */
export async function planOf(db: Db | Tx, row: CheckpointRestore): Promise<RestorePlan & { requestDigest?: string }> {
  const plan = row.plan as unknown as RestorePlan & { requestDigest?: string };
  const diff = await readableJson(db, plan.diff, restorePlanContext(row.id));
  return {
    ...plan,
    diff: Array.isArray(diff)
      ? (diff as RestorePlan["diff"])
      : [{ path: "", kind: "changed", before: diff, after: diff }],
    checkpoint: { ...plan.checkpoint, createdAt: new Date(plan.checkpoint.createdAt) },
    lease: { ...plan.lease, expiresAt: plan.lease.expiresAt ? new Date(plan.lease.expiresAt) : null },
  };
}

export async function restoreViewOf(db: Db | Tx, row: CheckpointRestore): Promise<CheckpointRestoreView> {
  const { requestDigest: _digest, ...plan } = await planOf(db, row);
  return {
    id: row.id,
    taskId: row.taskId,
    checkpointId: row.checkpointId,
    outcome: row.outcome === "applied" ? "applied" : "refused",
    rewind: row.rewind,
    fromVersion: row.fromVersion,
    toVersion: row.toVersion,
    transitionId: row.transitionId,
    refusal: (restoreRefusalCodes as readonly string[]).includes(row.refusal ?? "")
      ? (row.refusal as RestoreRefusalCode)
      : null,
    plan,
    actor: row.actor,
    reason: row.reason,
    createdAt: row.createdAt,
  };
}

export async function getCheckpointRowOrThrow(db: Db | Tx, checkpointId: string): Promise<Checkpoint> {
  const row = await db.checkpoint.findFirst({ where: { id: checkpointId } });
  if (!row) throw new AppError("not_found", `Checkpoint ${checkpointId} does not exist.`);
  return openedCheckpoint(db, row);
}

export async function getTaskOrThrowIn(reader: Db | Tx, taskId: string): Promise<TaskView> {
  const row = await reader.task.findFirst({ where: { id: taskId } });
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return openTaskView(reader, row);
}

export function workflowOf(task: TaskView): WorkflowDefinition {
  const def = getWorkflowByDigest(task.workflow.digest);
  if (!def) {
    throw new AppError(
      "invariant_violated",
      `Task ${task.id} is pinned to workflow digest ${task.workflow.digest}, which this server does not have.`,
      {
        violations: [
          { invariant: "workflow_definition_available", message: `Unknown workflow digest ${task.workflow.digest}.` },
        ],
      },
    );
  }
  return def;
}

export function summarize(row: StoredCheckpoint, verified: VerifiedCheckpoint): CheckpointSummary {
  return {
    id: row.id,
    taskId: row.taskId,
    stateVersion: row.stateVersion,
    schemaVersion: row.schemaVersion,
    trigger: triggerOf(row.trigger),
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    keyId: row.keyId,
    snapshotDigest: row.snapshotDigest,
    snapshotStatus: verified.parsed?.document.state_snapshot.status ?? null,
    integrity: verified.report,
  };
}

/** The column as a trigger; a value outside the union is already reported by columns_match (the payload's is checked). */
export function triggerOf(value: string): CheckpointTrigger {
  const parsed = CheckpointTriggerSchema.safeParse(value);
  return parsed.success ? parsed.data : "on_demand";
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): a finished task's restore attempts, in the caller's transaction. */
export async function deleteRestoresOfTask(tx: Tx, taskId: string): Promise<{ checkpoint_restores: number }> {
  return { checkpoint_restores: (await tx.checkpointRestore.deleteMany({ where: { taskId } })).count };
}
