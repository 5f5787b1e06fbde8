import { Prisma } from "@/lib/generated/prisma/client";
import { directQuery, type Db, type Tx } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { newId } from "@/lib/core/ids";
import type { Actor } from "@/lib/model/actor";
import { checkpointCreatedAuditEntry } from "@/lib/model/audit/audit-events";
import { auditEntryInsertSql } from "@/lib/stores/audit-log";
import { openText, sealText } from "@/lib/stores/field-encryption";

import { configuredKeyring, type CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import {
  CheckpointRefusedError,
  sealCheckpoint,
  type SealedCheckpoint,
  type StoredCheckpoint,
} from "@/lib/model/checkpoints/checkpoint-integrity";
import { currentPolicyVersion } from "@/lib/model/checkpoints/checkpoint-policy";
import type { CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import { succeededStatuses } from "@/lib/model/executions/execution-rules";
import type { TaskState } from "@/lib/model/tasks/task-state";

/**
 * The writer of `checkpoints` rows: sealing and storing one checkpoint in
 * the caller's transaction. Transitions and intents call it at their
 * boundaries; the checkpoint use cases (create, restore, resume, ship) in
 * lib/use-cases/checkpoints/ call it too. It reads tasks and leases but
 * knows no task use case, so the task CAS can take a checkpoint without an
 * import cycle.
 */

export interface CheckpointOptions {
  /** Signing keys; the configured keyring (lib/config/env.ts) when absent. Tests rotate keys through this. */
  keyring?: CheckpointKeyring;
  /**
   * What the checkpoint records besides the state, read by the caller
   * earlier in the same transaction (readCheckpointContext, asked for with
   * the transaction's other reads: lib/use-cases/executions/record-intent.ts).
   */
  context?: CheckpointContext;
}

export interface TakeCheckpointInput {
  task: { id: string; workflowDigest: string; intentId: string; createdBy: string };
  /** The committed state; validated again before it is captured. */
  state: TaskState;
  trigger: CheckpointTrigger;
  actor: Actor;
  createdAt?: Date;
  checkpointId?: string;
}

/**
 * Takes a checkpoint in the caller's transaction: the automatic ones commit
 * with the transition (or the intent) that reached the boundary, or not at
 * all. Everything besides the state is read here, in one statement, from
 * the same transaction. Refuses (422 checkpoint_of_valid_state) a state that
 * is not valid TaskState of its workflow.
 */
export async function takeCheckpointInTransaction(
  tx: Tx,
  input: TakeCheckpointInput,
  options: CheckpointOptions = {},
): Promise<StoredCheckpoint> {
  const context = options.context ?? (await readCheckpointContext(tx, input.task.id));
  let sealed: SealedCheckpoint;
  try {
    sealed = sealCheckpoint(
      {
        checkpointId: input.checkpointId ?? newId("ckpt"),
        trigger: input.trigger,
        createdAt: input.createdAt ?? new Date(),
        createdBy: input.actor.identity,
        task: input.task,
        state: input.state,
        inputDigest: context.inputDigest,
        lease: context.lease,
        undeliveredMessageIds: context.undelivered,
        receiptIds: context.receipts,
        lastMessageId: context.lastMessageId,
        policyVersion: currentPolicyVersion(),
      },
      keyringOf(options),
    );
  } catch (error) {
    if (!(error instanceof CheckpointRefusedError)) throw error;
    throw new AppError("invariant_violated", error.message, {
      violations: [{ invariant: error.invariant, message: error.message }],
    });
  }
  // One statement: the row, then its audit entry, written only with it.
  const c = await sealedForStorage(tx, sealed.row);
  const row = Prisma.sql`
    INSERT INTO checkpoints (id, task_id, state_version, schema_version, trigger, payload, snapshot_digest, signature, key_id, created_at, created_by)
    VALUES (${c.id}, ${c.taskId}, ${c.stateVersion}, ${c.schemaVersion}, ${c.trigger}, ${c.payload}, ${c.snapshotDigest},
            ${c.signature}, ${c.keyId}, ${c.createdAt.toISOString()}::timestamptz, ${c.createdBy})
    RETURNING 1`;
  const audit = auditEntryInsertSql(checkpointCreatedAuditEntry(c, input.actor), { onlyIfRowsIn: "created" });
  await directQuery(tx, Prisma.sql`WITH created AS (${row}) ${audit} RETURNING 1`, { prepare: "insert_checkpoint" });
  return sealed.row;
}

/**
 * The row as it is stored: the payload (the whole task snapshot, customer
 * data and free text included) sealed at rest under the tenant's data key
 * (docs/encryption.md). The signature covers the canonical plaintext, so a
 * checkpoint verifies the same wherever it is opened, and a standby that
 * imports it re-seals it under its own keys.
 */
export async function sealedForStorage<T extends StoredCheckpoint>(tx: Db | Tx, row: T): Promise<T> {
  return { ...row, payload: await sealText(tx, payloadContext(row.id), row.payload) };
}

/**
 * A stored row with its payload opened, as verification and restores read
 * it. A payload that does not open because it was altered is returned as
 * stored: verification then reports it unreadable, check by check, like any
 * corrupt checkpoint. A key that cannot be had is an error (key_unavailable).
 */
export async function openedCheckpoint<T extends { id: string; payload: string }>(db: Db | Tx, row: T): Promise<T> {
  try {
    return { ...row, payload: await openText(db, row.payload, payloadContext(row.id)) };
  } catch (error) {
    if (isAppError(error) && error.code === "invariant_violated") return row;
    throw error;
  }
}

function payloadContext(checkpointId: string): string {
  return `checkpoints.payload:${checkpointId}`;
}

export interface CheckpointContext {
  inputDigest: string;
  lease: { holder: string; fencingToken: string } | null;
  undelivered: string[];
  receipts: string[];
  lastMessageId: string | null;
}

/**
 * One statement, so the pieces agree with each other (and, in the
 * transition's transaction, with the state). The creation record is the
 * task's transition to version 1 (createTask writes it so): one probe of
 * the (tenant, task, version) key, where filtering on from_version alone
 * read every transition the task ever made (each checkpoint slower than
 * the last), and ordering by version for the first let the planner, once
 * it had statistics, prefer the same scan and a sort.
 */
export async function readCheckpointContext(tx: Tx, taskId: string): Promise<CheckpointContext> {
  const rows = await directQuery<{
    input_digest: string | null;
    lease: { holder: string; fencing_token: string } | null;
    undelivered: string[];
    receipts: string[];
    last_message_id: string | null;
  }>(
    tx,
    Prisma.sql`
    SELECT
      (SELECT request_digest FROM transitions WHERE task_id = ${taskId} AND to_version = 1 AND from_version IS NULL)
        AS input_digest,
      (SELECT json_build_object('holder', holder, 'fencing_token', fencing_token::text) FROM leases WHERE task_id = ${taskId} AND expires_at > now()) AS lease,
      (SELECT coalesce(json_agg(id ORDER BY created_at, id), '[]'::json) FROM outbox_messages WHERE task_id = ${taskId} AND delivered_at IS NULL) AS undelivered,
      (SELECT coalesce(json_agg(id ORDER BY created_at, id), '[]'::json) FROM executions
        WHERE task_id = ${taskId} AND status::text IN (${Prisma.join(succeededStatuses)})) AS receipts,
      (SELECT id FROM (SELECT id, created_at AS at FROM outbox_messages WHERE task_id = ${taskId}
                       UNION ALL SELECT event_id, received_at FROM inbox_events WHERE task_id = ${taskId}) m
        ORDER BY at DESC, id DESC LIMIT 1) AS last_message_id`,
    { prepare: "checkpoint_context" },
  );
  const row = rows[0];
  if (!row?.input_digest) throw new AppError("not_found", `Task ${taskId} has no creation record.`);
  const lease = row.lease ? { holder: row.lease.holder, fencingToken: row.lease.fencing_token } : null;
  return {
    inputDigest: row.input_digest,
    lease,
    undelivered: row.undelivered,
    receipts: row.receipts,
    lastMessageId: row.last_message_id,
  };
}

export function keyringOf(options: CheckpointOptions): CheckpointKeyring {
  return options.keyring ?? configuredKeyring();
}

/**
 * Retention (lib/use-cases/retention/apply-task-retention.ts): a finished
 * task's checkpoints, in the caller's transaction, after its restores
 * (lib/use-cases/checkpoints/checkpoint-rows.ts) and before its task row.
 */
export async function deleteCheckpointsOfTask(tx: Tx, taskId: string): Promise<{ checkpoints: number }> {
  return { checkpoints: (await tx.checkpoint.deleteMany({ where: { taskId } })).count };
}
