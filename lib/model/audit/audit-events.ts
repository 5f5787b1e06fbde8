import type { AuditAction, AuditActor } from "@/lib/model/audit/audit-chain";
import type { AuditEntryInput } from "@/lib/model/audit/audit-chain";
import type {
  Checkpoint,
  CheckpointRestore,
  DivergenceAlert,
  Execution,
  ExecutionStatus,
  Review,
  ReviewDecisionKind,
  TaskInstruction,
} from "@/lib/generated/prisma/client";

/**
 * What each write path records, as pure builders of AuditEntryInput, so that
 * wiring a path is one line in its transaction:
 *
 *   await appendAuditEntry(tx, executionAuditEntry(row, from, reason, evidence, actor));
 *
 * The builders take the rows the paths already hold (Prisma's types, or the
 * few fields of a transition record), never read anything, and put into
 * `details` what an auditor needs to answer "what happened" without the
 * other tables: versions, statuses, reasons, ids, evidence.
 */

/** The fields of lib/stores/tasks/task-store.ts's TransitionRecord an entry needs (it satisfies this as is). */
export interface TransitionFacts {
  id: string;
  taskId: string;
  fromVersion: number | null;
  toVersion: number;
  fromStatus: string | null;
  toStatus: string;
  actor: AuditActor;
  reason: string | null;
  createdAt: Date;
}

/** A task created (fromVersion null) or moved; `restored` for the transition a checkpoint restore applies. */
export function transitionAuditEntry(t: TransitionFacts, options: { restored?: boolean } = {}): AuditEntryInput {
  const action: AuditAction = options.restored
    ? "task.restored"
    : t.fromVersion === null
      ? "task.created"
      : "task.transitioned";
  return {
    action,
    actor: t.actor,
    subject: { type: "task", id: t.taskId },
    taskId: t.taskId,
    at: t.createdAt,
    details: {
      transition_id: t.id,
      from_version: t.fromVersion,
      to_version: t.toVersion,
      from_status: t.fromStatus,
      to_status: t.toStatus,
      reason: t.reason,
    },
  };
}

/** The action of an execution arriving in a status: reconciliation outcomes are named as such. */
export const executionActionByStatus: Record<ExecutionStatus, AuditAction> = {
  INTENT_RECORDED: "execution.intent_recorded",
  SENT: "execution.sent",
  SUCCEEDED: "execution.succeeded",
  FAILED: "execution.failed",
  OUTCOME_UNKNOWN: "execution.outcome_unknown",
  CANCELLED: "execution.cancelled",
  RECONCILED_SUCCEEDED: "reconciliation.succeeded",
  RECONCILED_FAILED: "reconciliation.failed",
  NEEDS_HUMAN: "reconciliation.needs_human",
};

/** An execution row after a move (or its creation, `from` null): one entry per execution_events row. */
export function executionAuditEntry(
  row: Execution,
  from: ExecutionStatus | null,
  reason: string,
  evidence: unknown,
  actor: AuditActor,
): AuditEntryInput {
  return {
    action: executionActionByStatus[row.status],
    actor,
    subject: { type: "execution", id: row.id },
    taskId: row.taskId,
    details: {
      tool: row.tool,
      tool_call_id: row.toolCallId,
      idempotency_key: row.idempotencyKey,
      attempt: row.attempt,
      attempt_id: row.attemptId,
      irreversible: row.irreversible,
      // A compensation names the effect it undoes, so the audit log alone links the two.
      ...(row.compensatesId ? { compensates_execution_id: row.compensatesId } : {}),
      from_status: from,
      to_status: row.status,
      version: row.version,
      reason,
      evidence: evidence ?? null,
    },
  };
}

export function reviewOpenedAuditEntry(review: Review, actor: AuditActor): AuditEntryInput {
  return {
    action: "review.opened",
    actor,
    subject: { type: "review", id: review.id },
    taskId: review.taskId,
    details: {
      execution_id: review.executionId,
      round: review.round,
      reason: review.reason,
      amount_cents: review.amountCents,
      currency: review.currency,
      required_approvals: review.requiredApprovals,
    },
  };
}

/** One person's decision, with the review's status after it (a first approval of two leaves it OPEN). */
export function reviewDecidedAuditEntry(
  review: Review,
  decision: ReviewDecisionKind,
  reason: string,
  actor: AuditActor,
): AuditEntryInput {
  return {
    action: "review.decided",
    actor,
    subject: { type: "review", id: review.id },
    taskId: review.taskId,
    details: {
      execution_id: review.executionId,
      round: review.round,
      decision,
      reason,
      status_after: review.status,
      version_after: review.version,
    },
  };
}

/**
 * A review closed by the system, not decided by a person: the execution a
 * person had approved was settled (by the re-execution's answer, or the
 * reconciler found the effect). Not review.decided: nobody decided anything now.
 */
export function reviewClosedAuditEntry(review: Review, note: string, actor: AuditActor): AuditEntryInput {
  return {
    action: "review.closed",
    actor,
    subject: { type: "review", id: review.id },
    taskId: review.taskId,
    details: {
      execution_id: review.executionId,
      round: review.round,
      note,
      status_after: review.status,
      version_after: review.version,
    },
  };
}

/** An alert raised (status OPEN) or resolved (RESOLVED, with who and why). */
export function divergenceAuditEntry(alert: DivergenceAlert, actor: AuditActor): AuditEntryInput {
  const resolved = alert.status === "RESOLVED";
  return {
    action: resolved ? "divergence.resolved" : "divergence.raised",
    actor,
    subject: { type: "divergence_alert", id: alert.id },
    taskId: alert.taskId,
    details: resolved
      ? {
          kind: alert.kind,
          severity: alert.severity,
          execution_id: alert.executionId,
          resolution: alert.resolution,
          version: alert.version,
        }
      : {
          kind: alert.kind,
          severity: alert.severity,
          execution_id: alert.executionId,
          message: alert.message,
          internal: alert.internal,
          external: alert.external,
        },
  };
}

/**
 * A person's action on an alert (lib/use-cases/alerts/divergence.ts): acknowledged,
 * escalated, or reconciled against the provider; `details` says what it found
 * or moved. The alert row is the one after the action's CAS.
 */
export function alertActionAuditEntry(
  alert: DivergenceAlert,
  action: "divergence.acknowledged" | "divergence.escalated" | "divergence.reconciled",
  reason: string,
  actor: AuditActor,
  details: Record<string, unknown> = {},
): AuditEntryInput {
  return {
    action,
    actor,
    subject: { type: "divergence_alert", id: alert.id },
    taskId: alert.taskId || null,
    details: {
      kind: alert.kind,
      severity: alert.severity,
      execution_id: alert.executionId,
      reason,
      status_after: alert.status,
      version_after: alert.version,
      ...details,
    },
  };
}

export function checkpointCreatedAuditEntry(
  checkpoint: Pick<Checkpoint, "id" | "taskId" | "createdAt" | "stateVersion" | "trigger" | "snapshotDigest" | "keyId">,
  actor: AuditActor,
): AuditEntryInput {
  return {
    action: "checkpoint.created",
    actor,
    subject: { type: "checkpoint", id: checkpoint.id },
    taskId: checkpoint.taskId,
    at: checkpoint.createdAt,
    details: {
      state_version: checkpoint.stateVersion,
      trigger: checkpoint.trigger,
      snapshot_digest: checkpoint.snapshotDigest,
      key_id: checkpoint.keyId,
    },
  };
}

/**
 * A restore attempt. Applied: task.restored, in the task's chain (the restore
 * holds the task row, its CAS just moved it). Refused: checkpoint.restore_refused,
 * in the checkpoint's chain, with the refusal; nothing else was written, so
 * append it last in its transaction.
 */
export function checkpointRestoreAuditEntry(restore: CheckpointRestore, actor: AuditActor): AuditEntryInput {
  const applied = restore.outcome === "applied";
  return {
    action: applied ? "task.restored" : "checkpoint.restore_refused",
    actor,
    subject: applied ? { type: "task", id: restore.taskId } : { type: "checkpoint", id: restore.checkpointId },
    taskId: restore.taskId,
    at: restore.createdAt,
    details: {
      checkpoint_id: restore.checkpointId,
      restore_id: restore.id,
      rewind: restore.rewind,
      from_version: restore.fromVersion,
      to_version: restore.toVersion,
      transition_id: restore.transitionId,
      refusal: restore.refusal,
      reason: restore.reason,
    },
  };
}

/**
 * One entry appended to a task's instruction ledger, in the ledger's own
 * chain (`instruction_ledger:<task>`): what was said, by whom, whether it is
 * authorized and which instruction it superseded.
 */
export function instructionRecordedAuditEntry(row: TaskInstruction, actor: AuditActor): AuditEntryInput {
  return {
    action: "instruction.recorded",
    actor,
    subject: { type: "instruction_ledger", id: row.taskId },
    taskId: row.taskId,
    at: row.createdAt,
    details: {
      instruction_id: row.id,
      seq: row.seq,
      topic: row.topic,
      directive: row.directive,
      text: row.text,
      source: row.source,
      issued_by: row.issuedBy,
      authorized: row.authorized,
      supersedes_id: row.supersedesId,
    },
  };
}

/**
 * A change to a person (created, role changed, disabled, enabled), in the
 * system chain: who did it, to whom, and what the person is now. Never a
 * password or its hash.
 */
export function personAuditEntry(
  action:
    | "user.created"
    | "user.role_changed"
    | "user.disabled"
    | "user.enabled"
    | "user.password_changed"
    | "user.password_reset"
    | "user.platform_admin_granted"
    | "user.platform_admin_revoked",
  person: { id: string; username: string; role: string; sessionVersion: number },
  actor: AuditActor,
  details: Record<string, unknown> = {},
): AuditEntryInput {
  return {
    action,
    actor,
    subject: { type: "user", id: person.id },
    details: { username: person.username, role: person.role, session_version: person.sessionVersion, ...details },
  };
}

/**
 * A change to a tenant's data keys, in the system chain: which key versions
 * and key-encryption key ids, never key material.
 */
export function dataKeysAuditEntry(
  action: "keys.data_key_created" | "keys.data_key_rotated" | "keys.kek_rotated" | "keys.destroyed",
  tenantId: string,
  actor: AuditActor,
  details: Record<string, unknown>,
): AuditEntryInput {
  return { action, actor, subject: { type: "data_keys", id: tenantId }, details: { tenant_id: tenantId, ...details } };
}

/** A change to the tenant register, recorded in that tenant's own chain. */
export function tenantAuditEntry(
  action: "tenant.created" | "tenant.suspended" | "tenant.reactivated" | "tenant.deleted",
  tenantId: string,
  actor: AuditActor,
  details: Record<string, unknown>,
): AuditEntryInput {
  return { action, actor, subject: { type: "tenant", id: tenantId }, details: { tenant_id: tenantId, ...details } };
}

/** What a LangGraph checkpoint put, a task's pending writes, or a thread's deletion changed (lib/use-cases/graph/). */
export interface GraphAuditFacts {
  taskId: string;
  threadId: string;
  checkpointNs: string;
  checkpointId?: string;
  taskVersion: number;
  actor: AuditActor;
  at: Date;
}

export function graphCheckpointAuditEntry(
  f: GraphAuditFacts & {
    parentCheckpointId: string | null;
    forkedFrom: string | null;
    contentDigest: string;
    metadata: Record<string, unknown>;
  },
): AuditEntryInput {
  return {
    action: "graph.checkpoint_put",
    actor: f.actor,
    subject: { type: "task", id: f.taskId },
    taskId: f.taskId,
    at: f.at,
    details: {
      thread_id: f.threadId,
      checkpoint_ns: f.checkpointNs,
      checkpoint_id: f.checkpointId ?? null,
      parent_checkpoint_id: f.parentCheckpointId,
      forked_from: f.forkedFrom,
      // The digest of exactly what was stored: a verifier re-computes it from the rows.
      content_digest: f.contentDigest,
      step: typeof f.metadata.step === "number" ? f.metadata.step : null,
      source: typeof f.metadata.source === "string" ? f.metadata.source : null,
      task_version: f.taskVersion,
    },
  };
}

export function graphWritesAuditEntry(
  f: GraphAuditFacts & { graphTaskId: string; channels: string[]; contentDigest: string },
): AuditEntryInput {
  return {
    action: "graph.writes_put",
    actor: f.actor,
    subject: { type: "task", id: f.taskId },
    taskId: f.taskId,
    at: f.at,
    details: {
      thread_id: f.threadId,
      checkpoint_ns: f.checkpointNs,
      checkpoint_id: f.checkpointId ?? null,
      graph_task_id: f.graphTaskId,
      channels: f.channels,
      content_digest: f.contentDigest,
      task_version: f.taskVersion,
    },
  };
}

export function graphThreadDeletedAuditEntry(
  f: GraphAuditFacts & { deleted: { checkpoints: number; blobs: number; writes: number } },
): AuditEntryInput {
  return {
    action: "graph.thread_deleted",
    actor: f.actor,
    subject: { type: "task", id: f.taskId },
    taskId: f.taskId,
    at: f.at,
    details: { thread_id: f.threadId, ...f.deleted, task_version: f.taskVersion },
  };
}
