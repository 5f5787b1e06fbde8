import type { Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { Actor } from "@/lib/model/actor";
import type { TaskState } from "@/lib/model/tasks/task-state";
import { checkChangeInvariants } from "@/lib/model/tasks/transition-rules";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { assertValidState } from "@/lib/stores/tasks/task-state-checks";
import { transitionViewOf, type TransitionRecord } from "@/lib/stores/tasks/task-store";
import { openTaskView, type TransitionResult } from "@/lib/stores/tasks/task-views";
import { sealTaskState } from "@/lib/stores/tasks/task-state-sealing";

/**
 * A running task moved to another version of its workflow: the one write
 * that changes a task's pinned definition. Like every change it is a
 * compare-and-swap on the version, with its transition row and its audit
 * entry in the caller's transaction; unlike a transition it rewrites the
 * workflow columns too, and the state it writes must be valid under the new
 * definition (the caller, lib/use-cases/workflows/apply-workflow-migration.ts,
 * has checked the mapping; this checks the document about to be stored).
 */

export interface TaskMigration {
  taskId: string;
  expectedVersion: number;
  to: WorkflowDefinition;
  /** The state the task has under `to`. */
  status: string;
  /** From the old version's state names to the new one's, as the engineer gave it (recorded with the move). */
  mapping: Record<string, string>;
  reason: string;
  transitionId: string;
  requestDigest: string;
}

export async function migrateTaskInTransaction(tx: Tx, m: TaskMigration, actor: Actor): Promise<TransitionResult> {
  // FOR UPDATE: the row is read and written by this transaction alone, so the
  // checks below are made on the version the CAS then writes over.
  const rows = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM tasks WHERE id = ${m.taskId} FOR UPDATE`;
  if (rows.length === 0) throw new AppError("not_found", `Task ${m.taskId} does not exist.`);
  const row = await tx.task.findFirstOrThrow({ where: { id: m.taskId } });
  const before = await openTaskView(tx, row);
  if (row.version !== m.expectedVersion)
    throw new AppError(
      "version_conflict",
      `Task ${m.taskId} moved since the plan: it was at version ${m.expectedVersion}, it is at ${row.version} (${row.status}). Plan again.`,
      { currentVersion: row.version, currentStatus: row.status },
    );
  const now = new Date();
  const next: TaskState = {
    ...before.state,
    status: m.status,
    workflow_digest: m.to.digest,
    version: row.version + 1,
    updated_at: now.toISOString(),
    updated_by: actor.identity,
  };
  assertValidState(m.to, next);
  const changes = checkChangeInvariants(before.state, next);
  if (changes.length > 0)
    throw new AppError("invariant_violated", changes.map((v) => v.message).join(" "), { violations: changes });
  const record: TransitionRecord = {
    id: m.transitionId,
    taskId: m.taskId,
    fromVersion: row.version,
    toVersion: next.version,
    fromStatus: before.status,
    toStatus: next.status,
    actor,
    reason: m.reason.slice(0, 1000),
    patch: {},
    stateAfter: next,
    requestDigest: m.requestDigest,
    createdAt: now,
  };
  // The state's values keep their sealed bytes; its classes are the new version's.
  const sealed = (await sealTaskState(tx, m.taskId, next, before.state)) as Prisma.InputJsonValue;
  const { count } = await tx.task.updateMany({
    where: { id: m.taskId, version: m.expectedVersion },
    data: {
      workflowName: m.to.name,
      workflowVersion: m.to.version,
      workflowDigest: m.to.digest,
      status: next.status,
      version: next.version,
      state: sealed,
      updatedAt: now,
      updatedBy: actor.identity,
    },
  });
  // Unreachable under the row lock above; kept so a lost write can never go unnoticed.
  if (count !== 1) throw new AppError("version_conflict", `Task ${m.taskId} changed during its migration.`);
  await tx.transition.create({
    data: {
      id: record.id,
      taskId: record.taskId,
      fromVersion: record.fromVersion,
      toVersion: record.toVersion,
      fromStatus: record.fromStatus,
      toStatus: record.toStatus,
      actor: actor.identity,
      actorKind: actor.kind,
      reason: record.reason,
      patch: {},
      stateAfter: sealed,
      requestDigest: record.requestDigest,
      createdAt: now,
    },
  });
  await appendAuditEntry(tx, {
    action: "task.workflow_migrated",
    actor,
    subject: { type: "task", id: m.taskId },
    taskId: m.taskId,
    at: now,
    details: {
      transition_id: record.id,
      from_version: record.fromVersion,
      to_version: record.toVersion,
      from_status: record.fromStatus,
      to_status: record.toStatus,
      from_workflow: { name: before.workflow.name, version: before.workflow.version, digest: before.workflow.digest },
      to_workflow: { name: m.to.name, version: m.to.version, digest: m.to.digest },
      state_mapping: m.mapping,
      reason: record.reason,
    },
  });
  return {
    task: {
      ...before,
      workflow: { name: m.to.name, version: m.to.version, digest: m.to.digest },
      status: next.status,
      version: next.version,
      state: next,
      updatedAt: now,
      updatedBy: actor.identity,
    },
    transition: transitionViewOf(record),
    replayed: false,
  };
}
