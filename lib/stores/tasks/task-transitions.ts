import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { TaskPatchSchema, type TaskPatch, type TaskState } from "@/lib/model/tasks/task-state";
import {
  checkChangeInvariants,
  checkStateInvariants,
  evaluateTransition,
  type GateApproval,
} from "@/lib/model/tasks/transition-rules";
import { automaticCheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-boundaries";
import { takeCheckpointInTransaction } from "@/lib/stores/checkpoint-store";
import { assertValidState, workflowOfOrThrow } from "@/lib/stores/tasks/task-state-checks";
import {
  compareAndSwap,
  compareAndSwapStatement,
  sendCompareAndSwap,
  findTaskRow,
  rememberSwappedRow,
  throwIfLeaseRefused,
  transitionViewOf,
  type TransitionRecord,
} from "@/lib/stores/tasks/task-store";
import { openTaskView, type TaskView, type TransitionResult } from "@/lib/stores/tasks/task-views";
import { liveReservationsOfTask } from "@/lib/stores/execution-store";
import { reservationsOverCommitment } from "@/lib/model/executions/budget-reservation";
import type { Task } from "@/lib/generated/prisma/client";

/**
 * A checked change of a task: read it, check the transition against its
 * workflow and invariants, build the next state and its transition record.
 * transitionTaskInTransaction and restoreTaskInTransaction apply that in the
 * caller's transaction; lib/use-cases/tasks/transition-task.ts applies it as
 * the single CAS statement, with its own answers to a retry and a conflict.
 */

export const TransitionInputSchema = z.strictObject({
  expected_version: z.number().int().min(1),
  /** Omitted: an in-place update of gates, artifacts, agents, budget or subtasks. */
  to: z.string().min(1).max(64).optional(),
  patch: TaskPatchSchema.optional(),
  reason: z.string().max(1000).optional(),
  /** Retrying with the same id returns the first result and writes nothing. */
  transition_id: clientIdSchema.optional(),
  /** The writer's lease token (lib/stores/leases.ts); a stale one is refused. */
  fencing_token: z
    .string()
    .regex(/^[0-9]{1,18}$/, "must be the decimal fencing token of your lease")
    .optional(),
});
export type TransitionInput = z.infer<typeof TransitionInputSchema>;

/** What a transition asked for, so that a replay of its transition id is told apart from a different request under it. */
export function transitionRequestDigest(taskId: string, input: TransitionInput): string {
  return digestOf({
    op: "transition",
    task_id: taskId,
    expected_version: input.expected_version,
    to: input.to,
    patch: input.patch ?? {},
    reason: input.reason,
  });
}

/** The CAS guard failed: the task is no longer at the expected version. */
export class StaleVersion extends Error {
  /** What the task was seen at, when this call read it itself: no need to read it again. */
  constructor(readonly seen?: { version: number; status: string }) {
    super("stale version");
  }
}

async function hasUndecidedReview(db: Db | Tx, taskId: string): Promise<boolean> {
  return (await db.review.count({ where: { taskId, status: { in: ["OPEN", "ESCALATED"] } } })) > 0;
}

export interface PreparedTransition {
  /** The row it was prepared from, as stored (sealed values sealed). */
  row?: Task;
  before: TaskView;
  next: TaskState;
  record: TransitionRecord;
  /** The semantic boundary this transition crosses, if any (lib/model/checkpoints/checkpoint-boundaries.ts). */
  checkpointTrigger: ReturnType<typeof automaticCheckpointTrigger>;
}

/** The automatic checkpoint of a transition that crossed a boundary, in its transaction. Always true: it throws or is written. */
export async function checkpointTransition(
  tx: Tx,
  { before, next, record, checkpointTrigger }: PreparedTransition,
): Promise<boolean> {
  if (!checkpointTrigger) return true;
  await takeCheckpointInTransaction(tx, {
    task: {
      id: before.id,
      workflowDigest: before.workflow.digest,
      intentId: before.intentId,
      createdBy: before.createdBy,
    },
    state: next,
    trigger: checkpointTrigger,
    actor: record.actor,
    createdAt: record.createdAt,
  });
  return true;
}

/** Reads the task and checks everything that can be checked before the write; throws what fails. */
export async function prepareTransition(
  db: Db | Tx,
  taskId: string,
  input: TransitionInput,
  actor: Actor,
  transitionId: string,
  requestDigest: string,
  /** A person's approval of a human gate (lib/use-cases/tasks/approve-gate.ts); nothing else sets one. */
  gateApproval?: GateApproval,
  /** The task's row as the caller just read it (findTaskRow) in this transaction: not read again. The CAS still guards its version. */
  readRow?: Task,
): Promise<PreparedTransition> {
  const patch = input.patch ?? {};
  const row = readRow ?? (await findTaskRow(db, taskId));
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  if (row.version !== input.expected_version) throw new StaleVersion({ version: row.version, status: row.status });
  const def = workflowOfOrThrow(row);
  const before = await openTaskView(db, row);
  const current = before.state;
  // Before: a state that already breaks an invariant is not built upon.
  const stored = checkStateInvariants(def, current);
  if (stored.length > 0) {
    throw new AppError(
      "invariant_violated",
      "The stored state breaks an invariant; it must be recovered before it changes.",
      { violations: stored },
    );
  }
  // A frozen irreversible action is decided in the review queue, whose
  // decision moves the task itself (actor kind system); resolving the wait
  // by hand would leave the action frozen and the task moving on without it.
  if (current.status === "WAITING_FOR_HUMAN" && actor.kind !== "system" && (await hasUndecidedReview(db, taskId))) {
    const violation = {
      invariant: "review_decides_frozen_action",
      message: "This task waits on a frozen irreversible action: decide it in the review queue.",
    };
    throw new AppError("invariant_violated", violation.message, { violations: [violation] });
  }
  const evaluation = evaluateTransition(def, current, {
    to: input.to ?? current.status,
    patch,
    actorKind: actor.kind,
    gateApproval,
  });
  if (!evaluation.ok) {
    const message = evaluation.violations.map((v) => v.message).join(" ");
    if (evaluation.reason === "actor_not_permitted")
      throw new AppError("forbidden", message, { violations: evaluation.violations });
    throw new AppError("invariant_violated", message, { violations: evaluation.violations });
  }
  const now = new Date();
  const next: TaskState = {
    ...evaluation.next,
    version: row.version + 1,
    updated_at: now.toISOString(),
    updated_by: actor.identity,
  };
  // After: the exact document about to be written is re-validated.
  assertValidState(def, next);
  await refuseCommitmentBelowReservations(db, taskId, current, next);
  const record: TransitionRecord = {
    id: transitionId,
    taskId,
    fromVersion: row.version,
    toVersion: next.version,
    fromStatus: current.status,
    toStatus: next.status,
    actor,
    reason: input.reason ?? null,
    patch,
    stateAfter: next,
    stateBefore: current,
    requestDigest,
    createdAt: now,
  };
  return { row, before, next, record, checkpointTrigger: automaticCheckpointTrigger(def, current, next) };
}

/**
 * A lowered commitment must still hold what the task's calls that have
 * left reserved: their money may be gone, checked against the old
 * commitment when their intents were recorded. A call not sent yet may
 * stay over it: it is checked against the commitment as it is then when it
 * is resumed (record-intent.ts), and refused. Read before the CAS, which is
 * safe because every intent that reserves moves the task's version in its
 * own CAS: of the two, one loses and is checked again.
 */
async function refuseCommitmentBelowReservations(
  db: Db | Tx,
  taskId: string,
  before: TaskState,
  after: TaskState,
): Promise<void> {
  const committed = after.budget.currency_committed_usd;
  if (committed === 0 || committed >= before.budget.currency_committed_usd) return;
  const over = reservationsOverCommitment(committed, await liveReservationsOfTask(db, taskId, { sentOnly: true }));
  if (over) throw new AppError("invariant_violated", over.message, { violations: [over] });
}

export function transitionResultOf({ before, next, record }: PreparedTransition): TransitionResult {
  const task: TaskView = {
    ...before,
    status: next.status,
    version: next.version,
    state: next,
    updatedAt: record.createdAt,
    updatedBy: record.actor.identity,
  };
  return { task, transition: transitionViewOf(record), replayed: false };
}

/**
 * A transition that must commit together with other writes of the caller's
 * transaction (an execution intent, a review decision). Same checks and the
 * same CAS as transitionTask; a lost CAS throws version_conflict and the
 * caller's transaction rolls back. Idempotent retries are the caller's to
 * handle, through its own unique keys.
 */
export async function transitionTaskInTransaction(
  tx: Tx,
  taskId: string,
  rawInput: unknown,
  actor: Actor,
  options: {
    /** The task's row, read by the caller in `tx` with findTaskRow to decide this move (the ledger's steps): one read, not two. */
    row?: Task;
    /**
     * The row came from memory (rememberedTaskRow) rather than a read:
     * its version's xmin, which the swap also requires. A swap lost on it
     * wrote nothing, so the move is prepared again from a read, in `tx`.
     */
    unchangedSince?: string;
    /** Remember the row this move writes, for the task's next change from this process (transition-task.ts). */
    rememberOn?: Db;
  } = {},
): Promise<TransitionResult> {
  const move = await prepareTaskMoveInTransaction(tx, taskId, rawInput, actor, options);
  try {
    await move.swap();
  } catch (error) {
    // A move made on a remembered row (options.unchangedSince) that lost its swap wrote nothing, and nothing
    // was sent after it here: it is made again on the row as it is, read in `tx`.
    if (!(error instanceof RememberedRowChanged)) throw error;
    const { unchangedSince: _, row: __, ...rest } = options;
    return transitionTaskInTransaction(tx, taskId, rawInput, actor, rest);
  }
  return move.result;
}

/**
 * The move was prepared from the row this process wrote last
 * (rememberedTaskRow), and the row changed since: the CAS wrote nothing, but
 * what was sent after it in the transaction was built on that row, so the
 * caller rolls the transaction back and makes the step again on a read.
 */
export class RememberedRowChanged extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} changed since this process wrote it`);
  }
}

/** A task move prepared in a transaction (prepareTaskMoveInTransaction): its result known, its CAS not yet sent. */
export interface PreparedTaskMove {
  /** The task and transition as the move leaves them, if its CAS wins. */
  result: TransitionResult;
  /**
   * Sends the CAS (written before this returns, so statements asked for
   * after it follow it on the connection) and answers when it is applied.
   * A lost CAS refuses as transitionTaskInTransaction does (version_conflict,
   * lease_conflict), or with RememberedRowChanged when the move was prepared
   * from memory; the caller's transaction must then roll back.
   */
  swap(): Promise<void>;
}

/**
 * transitionTaskInTransaction in two halves, for a step that sends the
 * move's CAS together with the statements that follow it (the ledger's
 * intent: lib/use-cases/executions/record-intent.ts). The same checks and
 * the same CAS; a move refused while it is prepared from memory is prepared
 * again on a read, as there, since nothing has been sent yet.
 */
export async function prepareTaskMoveInTransaction(
  tx: Tx,
  taskId: string,
  rawInput: unknown,
  actor: Actor,
  options: { row?: Task; unchangedSince?: string; rememberOn?: Db } = {},
): Promise<PreparedTaskMove> {
  const input = parseOrThrow(TransitionInputSchema, rawInput);
  const transitionId = input.transition_id ?? newId("tr");
  const requestDigest = transitionRequestDigest(taskId, input);
  let prepared: PreparedTransition;
  try {
    prepared = await prepareTransition(tx, taskId, input, actor, transitionId, requestDigest, undefined, options.row);
  } catch (error) {
    if (options.unchangedSince !== undefined && isAppError(error)) {
      const { unchangedSince: _, row: __, ...rest } = options;
      return prepareTaskMoveInTransaction(tx, taskId, rawInput, actor, rest);
    }
    if (error instanceof StaleVersion && error.seen) throw versionConflict(input.expected_version, error.seen);
    throw error;
  }
  const built = await compareAndSwapStatement(tx, prepared.record, input.fencing_token, {
    unchangedSince: options.unchangedSince,
  });
  return {
    result: transitionResultOf(prepared),
    swap() {
      const answer = sendCompareAndSwap(tx, prepared.record, built);
      return (async () => {
        const swapped = await answer;
        if (!swapped && options.unchangedSince !== undefined) throw new RememberedRowChanged(taskId);
        if (swapped && options.rememberOn && prepared.row)
          rememberSwappedRow(options.rememberOn, prepared.row, prepared.record, swapped);
        if (!swapped) {
          await throwIfLeaseRefused(tx, taskId, input.expected_version, input.fencing_token, actor);
          const latest = await tx.task.findFirst({ where: { id: taskId }, select: { version: true, status: true } });
          throw versionConflict(input.expected_version, latest ?? { version: -1, status: "deleted" });
        }
        await checkpointTransition(tx, prepared);
      })();
    },
  };
}

export interface RestoreTransitionInput {
  expectedVersion: number;
  /** The state to write, built by lib/model/checkpoints/checkpoint-restore-rules.ts; version and updated_* are set here. */
  state: TaskState;
  patch: TaskPatch;
  reason: string;
  transitionId: string;
  requestDigest: string;
}

/**
 * A checkpoint restore as a transition: version n+1 through the same CAS and
 * log statement as every other change, so history is appended, never
 * rewritten, and the versions in between stay readable. The restored state
 * need not be reachable by one edge from the current one (that is what a
 * rewind is), but it must be a valid state of the task's workflow and keep
 * the change invariants (consumed budget never goes down, mandatory stays
 * mandatory). Only lib/use-cases/checkpoints/restore-checkpoint.ts calls this, after its own
 * checks; the lease is fenced there in the same transaction.
 */
export async function restoreTaskInTransaction(
  tx: Tx,
  taskId: string,
  input: RestoreTransitionInput,
  actor: Actor,
): Promise<TransitionResult> {
  const row = await findTaskRow(tx, taskId);
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  if (row.version !== input.expectedVersion) throw versionConflict(input.expectedVersion, row);
  const def = workflowOfOrThrow(row);
  const before = await openTaskView(tx, row);
  const now = new Date();
  const next: TaskState = {
    ...input.state,
    task_id: taskId,
    version: row.version + 1,
    updated_at: now.toISOString(),
    updated_by: actor.identity,
  };
  assertValidState(def, next);
  const changes = checkChangeInvariants(before.state, next);
  if (changes.length > 0)
    throw new AppError("invariant_violated", changes.map((v) => v.message).join(" "), { violations: changes });
  const record: TransitionRecord = {
    id: input.transitionId,
    taskId,
    fromVersion: row.version,
    toVersion: next.version,
    fromStatus: before.status,
    toStatus: next.status,
    actor,
    reason: input.reason.slice(0, 1000),
    patch: input.patch,
    stateAfter: next,
    stateBefore: before.state,
    requestDigest: input.requestDigest,
    createdAt: now,
  };
  if (!(await compareAndSwap(tx, record, undefined, { audited: false }))) {
    const latest = await tx.task.findFirst({ where: { id: taskId }, select: { version: true, status: true } });
    throw versionConflict(input.expectedVersion, latest ?? { version: -1, status: "deleted" });
  }
  return transitionResultOf({ before, next, record, checkpointTrigger: null });
}

function versionConflict(expected: number, latest: { version: number; status: string }): AppError {
  return new AppError(
    "version_conflict",
    `Expected version ${expected}, but the task is at version ${latest.version} (${latest.status}). Read it again and retry.`,
    { currentVersion: latest.version, currentStatus: latest.status },
  );
}
