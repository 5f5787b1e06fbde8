import { directQuery, type Db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { Prisma, type Task, type Transition } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { childLogger } from "@/lib/config/log";
import { countCasConflict, countTransition } from "@/lib/config/metrics";
import { inSpan } from "@/lib/config/tracing";
import type { Actor } from "@/lib/model/actor";
import type { TaskPatch, TaskState } from "@/lib/model/tasks/task-state";
import { describeLease, leaseRefusal, leaseViewOf } from "@/lib/model/leases/lease-rules";
import { transitionAuditEntry } from "@/lib/model/audit/audit-events";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { appendAuditEntry, auditEntryInsertSql } from "@/lib/stores/audit-log";
import { loadWorkflowDefinitions } from "@/lib/stores/workflow-registry";
import { sealTaskPatch, sealTaskState } from "@/lib/stores/tasks/task-state-sealing";
import {
  openStateAfter,
  openTaskView,
  openTransitionView,
  type TaskView,
  type TransitionResult,
  type TransitionView,
} from "@/lib/stores/tasks/task-views";

/**
 * The owner of the `tasks`, `transitions` and `write_conflicts` tables: a
 * task's first row and its creation record go in through insertTask, every
 * later change through compareAndSwap, a compare-and-swap on `version` with
 * its transition record in the same statement; a refused write leaves its
 * evidence through recordWriteConflict. The checks that come before a write
 * are in lib/stores/tasks/task-transitions.ts.
 */

export interface TransitionRecord {
  id: string;
  taskId: string;
  fromVersion: number | null;
  toVersion: number;
  fromStatus: string | null;
  toStatus: string;
  actor: Actor;
  reason: string | null;
  patch: TaskPatch;
  stateAfter: TaskState;
  /**
   * The state this transition changes, as the store opened it: the values
   * it keeps keep their sealed bytes (lib/stores/tasks/task-state-sealing.ts).
   */
  stateBefore?: TaskState;
  requestDigest: string;
  createdAt: Date;
}

/**
 * `db.task.findUnique` in raw SQL: the same row, typed the same, without the
 * query builder's per-call cost (about 0.6 ms of a ~2 ms transition, measured
 * in bench/transitions.ts). tests/db checks it against getTask.
 */
export async function findTaskRow(db: Db | Tx, taskId: string): Promise<Task | null> {
  const rows = await directQuery<Task>(
    db,
    Prisma.sql`
    SELECT id, workflow_name AS "workflowName", workflow_version AS "workflowVersion", workflow_digest AS "workflowDigest",
           status, version, state, intent_id AS "intentId", created_at AS "createdAt", created_by AS "createdBy",
           updated_at AS "updatedAt", updated_by AS "updatedBy"
      FROM tasks
     WHERE id = ${taskId}`,
    { prepare: "read_task" },
  );
  const row = rows[0] ?? null;
  // Every rule that reads this row asks for its definition synchronously
  // (getWorkflowByDigest): a version published by another process since this
  // one started is loaded here, once; after that this is a map lookup.
  if (row) await loadWorkflowDefinitions(db, [row.workflowDigest]);
  return row;
}

export interface NewTask {
  def: WorkflowDefinition;
  /** Version 1, already checked (assertValidState in lib/stores/tasks/task-state-checks.ts). */
  state: TaskState;
  actor: Actor;
  requestDigest: string;
  createdAt: Date;
}

/** A new task's row and its creation transition (from no version to 1), in one transaction. */
export async function insertTask(db: Db, { def, state, actor, requestDigest, createdAt }: NewTask): Promise<TaskView> {
  const row = await db.$transaction(async (tx) => {
    // Sealed once: the creation transition's state_after holds the same bytes as the row.
    const sealed = await sealTaskState(tx, state.task_id, state);
    const task = await tx.task.create({
      data: {
        id: state.task_id,
        workflowName: def.name,
        workflowVersion: def.version,
        workflowDigest: def.digest,
        status: state.status,
        version: 1,
        state: sealed as Prisma.InputJsonValue,
        intentId: state.intent_id,
        createdAt,
        createdBy: actor.identity,
        updatedAt: createdAt,
        updatedBy: actor.identity,
      },
    });
    await insertTransition(
      tx,
      {
        id: newId("tr"),
        taskId: state.task_id,
        fromVersion: null,
        toVersion: 1,
        fromStatus: null,
        toStatus: state.status,
        actor,
        reason: "created",
        patch: {},
        stateAfter: state,
        requestDigest,
        createdAt,
      },
      sealed,
    );
    return task;
  });
  return openTaskView(db, row);
}

async function insertTransition(tx: Tx, r: TransitionRecord, sealedState: unknown): Promise<TransitionView> {
  const row = await tx.transition.create({
    data: {
      id: r.id,
      taskId: r.taskId,
      fromVersion: r.fromVersion,
      toVersion: r.toVersion,
      fromStatus: r.fromStatus,
      toStatus: r.toStatus,
      actor: r.actor.identity,
      actorKind: r.actor.kind,
      reason: r.reason,
      patch: (await sealTaskPatch(tx, r.id, r.stateAfter.workflow_digest, r.patch)) as Prisma.InputJsonValue,
      stateAfter: sealedState as Prisma.InputJsonValue,
      requestDigest: r.requestDigest,
      createdAt: r.createdAt,
    },
  });
  await appendAuditEntry(tx, transitionAuditEntry(r));
  return openTransitionView(tx, row);
}

/**
 * The task update and its log row as ONE statement: PostgreSQL runs a
 * data-modifying CTE atomically, so either both rows are written or neither
 * (a duplicate transition id aborts the update too). The INSERT selects from
 * the UPDATE's result, so a lost CAS writes no log row. False when the task
 * is not at `fromVersion` any more.
 */
export async function compareAndSwap(
  db: Db | Tx,
  r: TransitionRecord,
  fencingToken?: string,
  options: CompareAndSwapOptions = {},
): Promise<SwappedRow | null> {
  return sendCompareAndSwap(db, r, await compareAndSwapStatement(db, r, fencingToken, options));
}

export interface CompareAndSwapOptions {
  audited?: boolean;
  /** The row version the record was prepared from, when it came from memory (rememberedTaskRow): the swap also requires that exact row version. */
  unchangedSince?: string;
}

/** A CAS statement built and its state sealed (compareAndSwapStatement), not yet sent. */
export interface CompareAndSwapStatement {
  statement: Prisma.Sql;
  state: unknown;
}

/**
 * compareAndSwap's statement, built and its state sealed, not yet sent:
 * the ledger sends it together with the statements that follow it in its
 * transaction (lib/stores/tasks/task-transitions.ts prepareTaskMoveInTransaction).
 */
export async function compareAndSwapStatement(
  db: Db | Tx,
  r: TransitionRecord,
  fencingToken?: string,
  options: CompareAndSwapOptions = {},
): Promise<CompareAndSwapStatement> {
  // Lease rule (leaseRefusal in lib/model/leases/lease-rules.ts), checked in the
  // same statement as the version: with a token, it must be the writer's
  // current unexpired lease; without one, an agent may not write while any
  // lease is live, its own identity's too (another process of the same
  // agent may hold it). People are not fenced (an operator may cancel a
  // leased task); the version still guards.
  const token = fencingToken ?? null;
  const isAgent = r.actor.kind === "agent";
  // Sealed before the statement: the state's values under the task, the patch's under this transition.
  const state = await sealTaskState(db, r.taskId, r.stateAfter, r.stateBefore);
  const patch = await sealTaskPatch(db, r.id, r.stateAfter.workflow_digest, r.patch);
  const updated = Prisma.sql`
      UPDATE tasks
         SET status = ${r.toStatus}, version = ${r.toVersion}, state = ${JSON.stringify(state)}::jsonb,
             updated_at = ${r.createdAt.toISOString()}::timestamptz, updated_by = ${r.actor.identity}
       WHERE id = ${r.taskId} AND version = ${r.fromVersion}
         ${options.unchangedSince === undefined ? Prisma.empty : Prisma.sql`AND xmin = ${options.unchangedSince}::xid`}
         AND CASE
               WHEN ${token}::bigint IS NOT NULL THEN EXISTS (
                 SELECT 1 FROM leases l
                  WHERE l.task_id = ${r.taskId} AND l.fencing_token = ${token}::bigint AND l.holder = ${r.actor.identity} AND l.expires_at > now())
               WHEN ${isAgent} THEN NOT EXISTS (
                 SELECT 1 FROM leases l WHERE l.task_id = ${r.taskId} AND l.expires_at > now())
               ELSE true
             END
      RETURNING id, status, version, state, updated_at, updated_by, xmin::text AS row_xmin`;
  // The log row takes state, status, version and time from the updated row,
  // so the (largest) state document crosses the wire and is parsed once.
  const logged = Prisma.sql`
    INSERT INTO transitions (id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind, reason, patch, state_after, request_digest, created_at)
    SELECT ${r.id}, u.id, ${r.fromVersion}, u.version, ${r.fromStatus}, u.status, u.updated_by, ${r.actor.kind}::"ActorKind",
           ${r.reason}, ${JSON.stringify(patch)}::jsonb, u.state, ${r.requestDigest}, u.updated_at
      FROM updated u`;
  // The audit entry is the same statement's last step, guarded on `logged`:
  // a stale or lease-refused write updates no row, logs none and records
  // nothing; and the chain's head is locked only after the task row and the
  // transition id, the order of every other writer. (Last, too, so that
  // pg_stat_activity's first 1 KiB of the statement still names the tables
  // it writes.) A restore passes audited: false: its restore record appends
  // the task.restored entry, with the checkpoint, in the same transaction.
  const rowVersion = Prisma.sql`RETURNING (SELECT row_xmin FROM updated) AS row_xmin`;
  const statement =
    options.audited === false
      ? Prisma.sql`WITH updated AS (${updated}) ${logged} ${rowVersion}`
      : Prisma.sql`WITH updated AS (${updated}), logged AS (${logged} RETURNING 1) ${auditEntryInsertSql(transitionAuditEntry(r), { onlyIfRowsIn: "logged" })} ${rowVersion}`;
  return { statement, state };
}

/** Sends a built CAS: the statement is written before this returns (pipeline mode), its answer awaited after. */
export function sendCompareAndSwap(
  db: Db | Tx,
  r: TransitionRecord,
  { statement, state }: CompareAndSwapStatement,
): Promise<SwappedRow | null> {
  return inSpan<SwappedRow | null>(
    "task cas",
    { "verity.task_id": r.taskId, "verity.from_version": r.fromVersion ?? -1, "verity.to_status": r.toStatus },
    async (span) => {
      const inserted = await directQuery<{ row_xmin: string }>(db, statement, { prepare: "cas" });
      span?.setAttribute("verity.swapped", inserted.length === 1);
      const xmin = inserted[0]?.row_xmin;
      if (xmin) countTransition(r.toStatus);
      return xmin ? { xmin, state } : null;
    },
  );
}

/** What a won compare-and-swap wrote that its caller cannot know: the row version's id, and the state as sealed. */
export interface SwappedRow {
  /** The new row version's `xmin`: any later write to the row, by anyone, changes it. */
  xmin: string;
  state: unknown;
}

/**
 * The task rows this process wrote last, per database handle (a tenant's
 * pool), so that the next transition of a task its agent drives from here
 * skips reading it: the row as this process wrote it, with its version's
 * `xmin`. It is only a guess: the swap that uses it also requires that
 * exact row version (`xmin`, besides the version number), so a row changed
 * since, by any writer in any process, wins nothing and is read afresh
 * (transition-task.ts). Bounded, oldest written first out.
 */
const rememberedRows = new WeakMap<object, Map<string, RememberedTaskRow>>();
const REMEMBERED_ROWS_PER_DATABASE = 2_000;

export interface RememberedTaskRow {
  row: Task;
  xmin: string;
}

/** The row this process last wrote for `taskId` (if it was at `version`, when one is asked for). */
export function rememberedTaskRow(db: Db, taskId: string, version?: number): RememberedTaskRow | null {
  const remembered = rememberedRows.get(db)?.get(taskId);
  return remembered && (version === undefined || remembered.row.version === version) ? remembered : null;
}

/** The row after a won swap of `r` from `before` (findTaskRow's shape): the columns compareAndSwap sets. */
export function rememberSwappedRow(db: Db, before: Task, r: TransitionRecord, swapped: SwappedRow): void {
  let rows = rememberedRows.get(db);
  if (!rows) rememberedRows.set(db, (rows = new Map()));
  rows.delete(r.taskId);
  rows.set(r.taskId, {
    xmin: swapped.xmin,
    row: {
      ...before,
      status: r.toStatus,
      version: r.toVersion,
      state: swapped.state as Task["state"],
      updatedAt: r.createdAt,
      updatedBy: r.actor.identity,
    },
  });
  if (rows.size > REMEMBERED_ROWS_PER_DATABASE) rows.delete(rows.keys().next().value!);
}

export function forgetTaskRow(db: Db, taskId: string): void {
  rememberedRows.get(db)?.delete(taskId);
}

export function transitionViewOf(r: TransitionRecord): TransitionView {
  return {
    id: r.id,
    taskId: r.taskId,
    fromVersion: r.fromVersion,
    toVersion: r.toVersion,
    fromStatus: r.fromStatus,
    toStatus: r.toStatus,
    actor: r.actor.identity,
    actorKind: r.actor.kind,
    reason: r.reason,
    patch: r.patch,
    createdAt: r.createdAt,
  };
}

export type WriteConflictKind = "version" | "fencing";

/**
 * The evidence of a refused write (lib/use-cases/monitor/check-write-conflicts.ts raises
 * alerts from it; the dashboard counts it). Only on the refusal path, never
 * on a successful transition. Best effort by design: the refusal itself is
 * the guarantee and is answered either way; losing this row loses a
 * statistic, not state.
 */
export async function recordWriteConflict(
  db: Db,
  c: {
    taskId: string;
    actor: Actor;
    kind: WriteConflictKind;
    expectedVersion: number;
    current: { version: number; status: string } | null;
    fencingToken?: string;
  },
): Promise<void> {
  countCasConflict(c.kind);
  try {
    await db.writeConflict.create({
      data: {
        id: newId("wc"),
        taskId: c.taskId,
        actor: c.actor.identity,
        kind: c.kind,
        expectedVersion: c.expectedVersion,
        currentVersion: c.current?.version ?? null,
        currentStatus: c.current?.status ?? null,
        fencingToken: c.fencingToken ?? null,
      },
    });
  } catch (error) {
    childLogger("tasks").error({ err: error, task_id: c.taskId }, "could not record the refused write");
  }
}

/**
 * Explains a CAS that failed with the version still as expected: the lease
 * condition refused it. A worker presenting an old fencing token (its lease
 * expired and someone else holds the task now) or an agent writing without
 * one while another holds the lease never overwrites the holder's work.
 */
export async function throwIfLeaseRefused(
  db: Db | Tx,
  taskId: string,
  expectedVersion: number,
  token: string | undefined,
  actor: Actor,
): Promise<void> {
  const task = await db.task.findFirst({ where: { id: taskId }, select: { version: true } });
  if (!task || task.version !== expectedVersion) return;
  const row = await db.lease.findFirst({ where: { taskId } });
  const lease = row ? leaseViewOf(row) : null;
  const refusal = leaseRefusal(lease, token, actor);
  // The lease changed between the refused write and this read (renewed,
  // released, taken): say so rather than name a lease that would pass.
  const why =
    refusal ??
    `The lease of task ${taskId} changed while this write was refused (it is now ${lease ? describeLease(lease) : "gone"}). Read the lease and the task again`;
  throw new AppError("lease_conflict", `${why}. Nothing was written.`, {
    violations: [{ invariant: "fencing_token_current", message: why }],
    holder: lease?.holder,
    fencingToken: lease?.fencingToken,
    leaseId: lease?.leaseId,
  });
}

/**
 * The first result again, rebuilt from the transition row (the state it
 * produced) and the task's immutable columns, so a retry cannot tell it
 * from the original answer.
 */
export async function replayOrThrow(
  db: Db,
  prior: Transition,
  taskId: string,
  requestDigest: string,
): Promise<TransitionResult> {
  if (prior.taskId !== taskId || prior.requestDigest !== requestDigest) {
    throw new AppError("idempotency_conflict", `Transition id ${prior.id} was already used for a different request.`);
  }
  const state = await openStateAfter(db, prior);
  // The transitions → tasks foreign key guarantees the row.
  const origin = await db.task.findFirstOrThrow({
    where: { id: prior.taskId },
    select: {
      workflowName: true,
      workflowVersion: true,
      workflowDigest: true,
      intentId: true,
      createdAt: true,
      createdBy: true,
    },
  });
  return {
    task: {
      id: prior.taskId,
      workflow: { name: origin.workflowName, version: origin.workflowVersion, digest: origin.workflowDigest },
      status: state.status,
      version: state.version,
      state,
      intentId: origin.intentId,
      createdAt: origin.createdAt,
      createdBy: origin.createdBy,
      updatedAt: new Date(state.updated_at),
      updatedBy: state.updated_by,
    },
    transition: await openTransitionView(db, prior),
    replayed: true,
  };
}

/**
 * Retention (lib/use-cases/retention/apply-task-retention.ts): a finished
 * task's refused writes, transitions and row, in the caller's transaction.
 * The last of a task's deletions: checkpoints and the other stores' rows
 * go first (transitions and checkpoints reference the task row).
 */
export async function deleteTaskRows(
  tx: Tx,
  taskId: string,
): Promise<{ write_conflicts: number; transitions: number; tasks: number }> {
  const write_conflicts = (await tx.writeConflict.deleteMany({ where: { taskId } })).count;
  const transitions = (await tx.transition.deleteMany({ where: { taskId } })).count;
  const tasks = (await tx.task.deleteMany({ where: { id: taskId } })).count;
  return { write_conflicts, transitions, tasks };
}
