import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { Prisma, type Execution } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { digestOf } from "@/lib/core/canonical-json";
import type { Actor } from "@/lib/model/actor";
import { executionAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import {
  canMoveExecution,
  retryAdviceOf,
  type ExecutionStatus,
  type RetryAdvice,
} from "@/lib/model/executions/execution-rules";
import { getInstructionsByIds, type InstructionBlock, type InstructionView } from "@/lib/stores/instructions";
import {
  liveReservationsAmong,
  reservationReleasedStatuses,
  type Reservation,
} from "@/lib/model/executions/budget-reservation";

/**
 * The owner of `executions` and `execution_events` rows: every status move
 * is a CAS on the execution's version with its event and audit entry in the
 * same transaction (moveExecution), and the reads every use case shares.
 * The use cases that decide the moves (intent, sent, outcome:
 * lib/use-cases/executions/; reviews' decisions: lib/use-cases/reviews/; the
 * reconciler; corrections) build on this module, so none of them needs
 * another's.
 */

/** The execution ledger's own moves (a failure handed to people, a task moved on after a correction): a system identity, so no worker's lease fences them. */
export const ledgerActor: Actor = { identity: "spiffe://verity.local/system/execution-ledger", kind: "system" };

export interface ExecutionView {
  id: string;
  taskId: string;
  toolCallId: string;
  attempt: number;
  attemptId: string;
  idempotencyKey: string;
  tool: string;
  /** The tool version the call was recorded under (null: recorded before the registry, a built-in's). */
  toolVersion?: number | null;
  irreversible: boolean;
  request: Record<string, unknown>;
  status: ExecutionStatus;
  version: number;
  result: unknown;
  evidence: unknown;
  error: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  sentAt: Date | null;
  settledAt: Date | null;
  /** The instruction the call relies on, if it named one. */
  instructionId?: string | null;
  /** The known-succeeded execution of the same task this one undoes (lib/use-cases/executions/compensation.ts), if it is a compensation. */
  compensatesId?: string | null;
  /** For a settled failure (FAILED, RECONCILED_FAILED): whether a new attempt under the same key is safe now, and why; null otherwise. */
  retry?: RetryAdvice | null;
}

/** The instructions behind a blocked call, for the agent and the review. */
export interface InstructionGuardView {
  kind: InstructionBlock["kind"];
  topic: string;
  reliedOn: InstructionView | null;
  current: InstructionView | null;
}

export function toExecutionView(row: Execution): ExecutionView {
  return {
    id: row.id,
    taskId: row.taskId,
    toolCallId: row.toolCallId,
    attempt: row.attempt,
    attemptId: row.attemptId,
    idempotencyKey: row.idempotencyKey,
    tool: row.tool,
    toolVersion: row.toolVersion,
    irreversible: row.irreversible,
    request: row.request as Record<string, unknown>,
    status: row.status,
    version: row.version,
    result: row.result,
    evidence: row.evidence,
    error: row.error,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    sentAt: row.sentAt,
    settledAt: row.settledAt,
    instructionId: row.instructionId,
    compensatesId: row.compensatesId,
    retry: retryAdviceOf(row),
  };
}

/** The idempotency key of a logical call: the same for every attempt, so the provider applies it at most once. */
export function idempotencyKeyOf(taskId: string, toolCallId: string): string {
  return `vrt:${taskId}:${toolCallId}`;
}

/**
 * What identifies a call's request, so a retry that changed it is refused
 * (idempotency_conflict): the tool, the request as validated, and for a
 * compensation the effect it undoes. An ordinary call's digest is the one
 * it had before compensations existed.
 */
export function intentDigestOf(tool: string, request: Record<string, unknown>, compensatesId?: string | null): string {
  return digestOf({ tool, request, ...(compensatesId ? { compensates: compensatesId } : {}) });
}

export interface NewIntent {
  taskId: string;
  toolCallId: string;
  tool: string;
  toolVersion: number | null;
  irreversible: boolean;
  request: Record<string, unknown>;
  instructionId: string | null;
  leaseToken: bigint | null;
  reserved: { minor: number; currency: string } | null;
  compensatesId: string | null;
  /** The first event's words. */
  reason: string;
  /** The first event's evidence (a review's release: `released_by_review`). */
  evidence?: unknown;
}

/** A call's first attempt, INTENT_RECORDED, with its event and audit entry: the one place an execution row is created. */
export async function insertIntent(tx: Tx, intent: NewIntent, actor: Actor, now = new Date()): Promise<Execution> {
  const id = newId("exec");
  const row = await tx.execution.create({
    data: {
      id,
      taskId: intent.taskId,
      toolCallId: intent.toolCallId,
      attempt: 1,
      attemptId: `${id}.1`,
      idempotencyKey: idempotencyKeyOf(intent.taskId, intent.toolCallId),
      tool: intent.tool,
      toolVersion: intent.toolVersion,
      irreversible: intent.irreversible,
      request: intent.request as Prisma.InputJsonValue,
      requestDigest: intentDigestOf(intent.tool, intent.request, intent.compensatesId),
      status: "INTENT_RECORDED",
      version: 1,
      createdBy: actor.identity,
      createdAt: now,
      updatedAt: now,
      instructionId: intent.instructionId,
      leaseToken: intent.leaseToken,
      reservedMinor: intent.reserved?.minor ?? null,
      reservedCurrency: intent.reserved?.currency ?? null,
      compensatesId: intent.compensatesId,
    },
  });
  await appendEvent(tx, row, null, intent.reason, intent.evidence, actor);
  return row;
}

export async function moveExecution(
  tx: Tx,
  existing: Execution,
  to: ExecutionStatus,
  actor: Actor,
  options: { reason: string; evidence?: unknown; data?: Prisma.ExecutionUpdateManyMutationInput },
): Promise<Execution> {
  if (!canMoveExecution(existing.status, to)) throw illegalMove(existing, to);
  const { count } = await tx.execution.updateMany({
    where: { id: existing.id, version: existing.version },
    data: { ...options.data, status: to, version: existing.version + 1, updatedAt: new Date() },
  });
  if (count === 0) {
    const latest = await tx.execution.findUnique({ where: { id: existing.id } });
    throw new AppError(
      "version_conflict",
      `Execution ${existing.id} changed meanwhile (now ${latest?.status}, version ${latest?.version}).`,
      {
        currentVersion: latest?.version,
        currentStatus: latest?.status,
      },
    );
  }
  const row = await tx.execution.findUniqueOrThrow({ where: { id: existing.id } });
  await appendEvent(tx, row, existing.status, options.reason, options.evidence, actor);
  return row;
}

export async function appendEvent(
  tx: Tx,
  row: Execution,
  from: ExecutionStatus | null,
  reason: string,
  evidence: unknown,
  actor: Actor,
): Promise<void> {
  await tx.executionEvent.create({
    data: {
      id: newId("exev"),
      executionId: row.id,
      attemptId: row.attemptId,
      fromStatus: from,
      toStatus: row.status,
      actor: actor.identity,
      reason,
      evidence: evidence === undefined ? Prisma.JsonNull : (evidence as Prisma.InputJsonValue),
    },
  });
  // After the execution row's write: this transaction holds that row, so the
  // execution stream's head adds no lock order of its own.
  await appendAuditEntry(tx, executionAuditEntry(row, from, reason, evidence, actor));
}

export function staleAttempt(existing: Execution, attemptId: string): AppError {
  return new AppError(
    "version_conflict",
    `Attempt ${attemptId} is not the current attempt of execution ${existing.id} (now ${existing.attemptId}, ${existing.status}).`,
    {
      currentVersion: existing.version,
      currentStatus: existing.status,
    },
  );
}

export function illegalMove(existing: Execution, to: ExecutionStatus): AppError {
  return new AppError("invariant_violated", `Execution ${existing.id} is ${existing.status}; it cannot become ${to}.`, {
    violations: [{ invariant: "execution_status_machine", message: `${existing.status} → ${to} is not allowed.` }],
  });
}

export async function getExecutionRowOrThrow(db: Db | Tx, executionId: string): Promise<Execution> {
  const row = await db.execution.findUnique({ where: { id: executionId } });
  if (!row) throw new AppError("not_found", `Execution ${executionId} does not exist.`);
  return row;
}

export async function getExecution(db: Db, executionId: string): Promise<ExecutionView | null> {
  const row = await db.execution.findUnique({ where: { id: executionId } });
  return row ? toExecutionView(row) : null;
}

export async function listExecutions(db: Db, taskId: string): Promise<ExecutionView[]> {
  const rows = await db.execution.findMany({ where: { taskId }, orderBy: { createdAt: "asc" } });
  return rows.map(toExecutionView);
}

export async function listExecutionEvents(db: Db, executionId: string) {
  return db.executionEvent.findMany({ where: { executionId }, orderBy: { createdAt: "asc" } });
}

/**
 * The task's reservations that still count (lib/model/executions/budget-reservation.ts):
 * its executions holding one whose effect may still happen or has happened.
 * `except` leaves out the execution being (re-)reserved; `sentOnly` keeps
 * only calls that have left (their effect may have happened or did).
 */
export async function liveReservationsOfTask(
  db: Db | Tx,
  taskId: string,
  options: { except?: string; sentOnly?: boolean } = {},
): Promise<Reservation[]> {
  const rows = await db.execution.findMany({
    where: {
      taskId,
      reservedMinor: { not: null },
      status: { notIn: [...reservationReleasedStatuses] },
      ...(options.except ? { id: { not: options.except } } : {}),
      ...(options.sentOnly ? { sentAt: { not: null } } : {}),
    },
    select: { status: true, reservedMinor: true, reservedCurrency: true },
  });
  return liveReservationsAmong(rows);
}

/**
 * When people released the execution's current attempt to its agent from a
 * review (decide-review.ts): the moment they approved sending it, over the
 * instructions as they stood then. Null for an attempt nobody released.
 */
export async function releasedByReviewAt(db: Db | Tx, row: Execution): Promise<Date | null> {
  const events = await db.executionEvent.findMany({
    where: { executionId: row.id, attemptId: row.attemptId, toStatus: "INTENT_RECORDED" },
    orderBy: { createdAt: "desc" },
    select: { evidence: true, createdAt: true },
  });
  const release = events.find(
    (e) => typeof (e.evidence as { released_by_review?: unknown } | null)?.released_by_review === "string",
  );
  return release?.createdAt ?? null;
}

/** The instructions the guard named when it froze `executionId`, from the freezing event; null if it was not frozen by the guard. */
export async function guardOf(db: Db | Tx, executionId: string): Promise<InstructionGuardView | null> {
  const events = await db.executionEvent.findMany({
    where: { executionId, toStatus: "NEEDS_HUMAN" },
    orderBy: { createdAt: "desc" },
  });
  for (const ev of events) {
    const g = (
      ev.evidence as {
        instruction_guard?: {
          kind: InstructionBlock["kind"];
          topic: string;
          relied_on_id: string | null;
          current_id: string | null;
        };
      } | null
    )?.instruction_guard;
    if (!g) continue;
    const found = await getInstructionsByIds(
      db,
      [g.relied_on_id, g.current_id].filter((x): x is string => !!x),
    );
    const byId = (id: string | null) => (id ? (found.find((i) => i.id === id) ?? null) : null);
    return { kind: g.kind, topic: g.topic, reliedOn: byId(g.relied_on_id), current: byId(g.current_id) };
  }
  return null;
}

/** An irreversible call whose failure would be safe to retry but has used up its tool's attempts: people decide, not another automatic attempt. */
export function isPastAttemptLimit(row: Execution): boolean {
  return row.irreversible && retryAdviceOf(row)?.code === "attempt_limit";
}

/**
 * Retention (lib/use-cases/retention/apply-task-retention.ts): a finished
 * task's executions and their events, in the caller's transaction, after
 * the rows that name an execution (its reviews, alerts and lookups).
 */
export async function deleteExecutionsOfTask(
  tx: Tx,
  taskId: string,
): Promise<{ execution_events: number; executions: number }> {
  const execution_events = (await tx.executionEvent.deleteMany({ where: { execution: { taskId } } })).count;
  const executions = (await tx.execution.deleteMany({ where: { taskId } })).count;
  return { execution_events, executions };
}
