import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import { directQuery, type Db, type Tx } from "@/lib/db/client";
import { AppError, fieldErrorsFromZod, isAppError } from "@/lib/core/errors";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import { Prisma, type Task, type Transition } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { childLogger } from "@/lib/config/log";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import {
  ArtifactsSchema,
  emptyGates,
  IdentitySchema,
  NewSubtaskSchema,
  TASK_STATE_SCHEMA_VERSION,
  TaskPatchSchema,
  TaskStateSchema,
  type TaskPatch,
  type TaskState,
} from "@/lib/model/tasks/task-state";
import { describeLease, leaseRefusal, leaseViewOf } from "@/lib/model/leases/lease-rules";
import { checkChangeInvariants, checkStateInvariants, evaluateTransition } from "@/lib/model/tasks/transition-rules";
import { automaticCheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-boundaries";
import { takeCheckpointInTransaction } from "@/lib/stores/checkpoint-store";
import { transitionAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry, auditEntryInsertSql } from "@/lib/stores/audit-log";
import type { ActorKind, WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getLatestWorkflow, getWorkflowByDigest, workflowNames } from "@/lib/model/workflows";

/**
 * The owner of the `tasks` and `transitions` tables: every write to either
 * goes through createTask or transitionTask, and every transitionTask is a
 * compare-and-swap on `version` with its transition record in the same
 * database transaction.
 */


const clientId = clientIdSchema;

export const CreateTaskInputSchema = z.strictObject({
  workflow: z.string().min(1).max(64),
  task_id: clientId.optional(),
  intent_id: clientId,
  subtasks: z.array(NewSubtaskSchema).max(200).optional(),
  artifacts: ArtifactsSchema.optional(),
  budget: z.strictObject({ currency_committed_usd: z.number().finite().min(0).max(1e12) }).optional(),
  active_agents: z.array(IdentitySchema).max(100).optional(),
});
export type CreateTaskInput = z.infer<typeof CreateTaskInputSchema>;

export const TransitionInputSchema = z.strictObject({
  expected_version: z.number().int().min(1),
  /** Omitted: an in-place update of gates, artifacts, agents, budget or subtasks. */
  to: z.string().min(1).max(64).optional(),
  patch: TaskPatchSchema.optional(),
  reason: z.string().max(1000).optional(),
  /** Retrying with the same id returns the first result and writes nothing. */
  transition_id: clientId.optional(),
  /** The writer's lease token (lib/stores/leases.ts); a stale one is refused. */
  fencing_token: z.string().regex(/^[0-9]{1,18}$/, "must be the decimal fencing token of your lease").optional(),
});
export type TransitionInput = z.infer<typeof TransitionInputSchema>;

export interface TaskView {
  id: string;
  workflow: { name: string; version: number; digest: string };
  status: string;
  version: number;
  state: TaskState;
  intentId: string;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string;
}

export interface TransitionView {
  id: string;
  taskId: string;
  fromVersion: number | null;
  toVersion: number;
  fromStatus: string | null;
  toStatus: string;
  actor: string;
  actorKind: ActorKind;
  reason: string | null;
  patch: TaskPatch;
  createdAt: Date;
}

export interface TransitionResult {
  task: TaskView;
  transition: TransitionView;
  /** True when this was a retry of an already-applied transition id. */
  replayed: boolean;
}


export async function createTask(db: Db, rawInput: unknown, actor: Actor): Promise<{ task: TaskView; created: boolean }> {
  const input = parseOrThrow(CreateTaskInputSchema, rawInput);
  const def = getLatestWorkflow(input.workflow);
  if (!def) {
    throw new AppError("validation_failed", `workflow: unknown workflow; expected one of ${workflowNames.join(", ")}`, {
      errors: [{ field: "workflow", message: `unknown workflow; expected one of ${workflowNames.join(", ")}` }],
    });
  }
  const taskId = input.task_id ?? newId("task");
  const requestDigest = digestOf({ op: "create", ...input, task_id: taskId });
  const now = new Date();
  const state: TaskState = {
    schema_version: TASK_STATE_SCHEMA_VERSION,
    task_id: taskId,
    version: 1,
    status: def.initial,
    gates: { ...emptyGates },
    artifacts: input.artifacts ?? {},
    active_agents: input.active_agents ?? [],
    completed_agents: [],
    failed_agents: [],
    budget: { currency_committed_usd: input.budget?.currency_committed_usd ?? 0, currency_spent_usd: 0, tokens_spent: 0, hops_used: 0 },
    subtasks: input.subtasks ?? [],
    workflow_digest: def.digest,
    intent_id: input.intent_id,
    updated_at: now.toISOString(),
    updated_by: actor.identity,
  };
  assertValidState(def, state);
  try {
    const row = await db.$transaction(async (tx) => {
      const task = await tx.task.create({
        data: {
          id: taskId,
          workflowName: def.name,
          workflowVersion: def.version,
          workflowDigest: def.digest,
          status: state.status,
          version: 1,
          state: state as unknown as Prisma.InputJsonValue,
          intentId: input.intent_id,
          createdAt: now,
          createdBy: actor.identity,
          updatedAt: now,
          updatedBy: actor.identity,
        },
      });
      await insertTransition(tx, {
        id: newId("tr"),
        taskId,
        fromVersion: null,
        toVersion: 1,
        fromStatus: null,
        toStatus: state.status,
        actor,
        reason: "created",
        patch: {},
        stateAfter: state,
        requestDigest,
        createdAt: now,
      });
      return task;
    });
    return { task: toTaskView(row), created: true };
  } catch (error) {
    if (!isUniqueViolation(error) || !input.task_id) throw error;
    // The task id exists: a retry of the same create returns the task, anything else is a conflict.
    const first = await db.transition.findFirst({ where: { taskId, fromVersion: null } });
    if (first?.requestDigest !== requestDigest) {
      throw new AppError("idempotency_conflict", `Task ${taskId} already exists and was created with different parameters.`);
    }
    return { task: await getTaskOrThrow(db, taskId), created: false };
  }
}

/** The CAS guard failed: the task is no longer at the expected version. */
class StaleVersion extends Error {
  /** What the task was seen at, when this call read it itself: no need to read it again. */
  constructor(readonly seen?: { version: number; status: string }) {
    super("stale version");
  }
}

export async function transitionTask(db: Db, taskId: string, rawInput: unknown, actor: Actor): Promise<TransitionResult> {
  const input = parseOrThrow(TransitionInputSchema, rawInput);
  const patch = input.patch ?? {};
  const transitionId = input.transition_id ?? newId("tr");
  const requestDigest = digestOf({ op: "transition", task_id: taskId, expected_version: input.expected_version, to: input.to, patch, reason: input.reason });
  try {
    // The read needs no transaction around it: the write below is one
    // statement guarded by `version = expected`, and every write bumps the
    // version, so the state checked here is exactly the state replaced. That
    // is the guarantee a READ COMMITTED transaction gave, in two round trips
    // instead of five (BEGIN, SELECT, UPDATE, INSERT, COMMIT).
    const prepared = await prepareTransition(db, taskId, input, actor, transitionId, requestDigest);
    // At a semantic boundary the checkpoint commits with the change or not
    // at all; everywhere else the single CAS statement stays the whole write.
    const swapped = prepared.checkpointTrigger
      ? await db.$transaction(async (tx) => (await compareAndSwap(tx, prepared.record, input.fencing_token)) && (await checkpointTransition(tx, prepared)))
      : await compareAndSwap(db, prepared.record, input.fencing_token);
    if (!swapped) {
      try {
        await throwIfLeaseRefused(db, taskId, input.expected_version, input.fencing_token, actor);
      } catch (refusal) {
        if (isAppError(refusal) && refusal.code === "lease_conflict") {
          await recordWriteConflict(db, { taskId, actor, kind: "fencing", expectedVersion: input.expected_version, current: null, fencingToken: input.fencing_token });
        }
        throw refusal;
      }
      throw new StaleVersion();
    }
    return resultOf(prepared);
  } catch (error) {
    if (!(error instanceof StaleVersion) && !isUniqueViolation(error)) throw error;
    // A retry of an applied transition lands here (its expected version is
    // now stale, or it raced its twin): answer with the first result.
    if (input.transition_id) {
      const prior = await db.transition.findUnique({ where: { id: input.transition_id } });
      if (prior) return replayOrThrow(db, prior, taskId, requestDigest);
    }
    // Under contention most conflicts are seen on the read above; only a CAS
    // lost between read and write needs another look at the task.
    const latest = error instanceof StaleVersion && error.seen ? error.seen : await findTaskRow(db, taskId);
    if (!latest) throw new AppError("not_found", `Task ${taskId} does not exist.`);
    await recordWriteConflict(db, { taskId, actor, kind: "version", expectedVersion: input.expected_version, current: latest, fencingToken: input.fencing_token });
    throw new AppError(
      "version_conflict",
      `Expected version ${input.expected_version}, but the task is at version ${latest.version} (${latest.status}). Read it again and retry.`,
      { currentVersion: latest.version, currentStatus: latest.status },
    );
  }
}

export type WriteConflictKind = "version" | "fencing";

/**
 * The evidence of a refused write (lib/use-cases/monitor/invariant-monitor.ts raises
 * alerts from it; the dashboard counts it). Only on the refusal path, never
 * on a successful transition. Best effort by design: the refusal itself is
 * the guarantee and is answered either way; losing this row loses a
 * statistic, not state.
 */
async function recordWriteConflict(
  db: Db,
  c: { taskId: string; actor: Actor; kind: WriteConflictKind; expectedVersion: number; current: { version: number; status: string } | null; fencingToken?: string },
): Promise<void> {
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

async function hasUndecidedReview(db: Db | Tx, taskId: string): Promise<boolean> {
  return (await db.review.count({ where: { taskId, status: { in: ["OPEN", "ESCALATED"] } } })) > 0;
}

/**
 * `db.task.findUnique` in raw SQL: the same row, typed the same, without the
 * query builder's per-call cost (about 0.6 ms of a ~2 ms transition, measured
 * in bench/transitions.ts). tests/db checks it against getTask.
 */
async function findTaskRow(db: Db | Tx, taskId: string): Promise<Task | null> {
  const rows = await directQuery<Task>(db, Prisma.sql`
    SELECT id, workflow_name AS "workflowName", workflow_version AS "workflowVersion", workflow_digest AS "workflowDigest",
           status, version, state, intent_id AS "intentId", created_at AS "createdAt", created_by AS "createdBy",
           updated_at AS "updatedAt", updated_by AS "updatedBy"
      FROM tasks
     WHERE id = ${taskId}`, { prepare: "read_task" });
  return rows[0] ?? null;
}

/**
 * The task update and its log row as ONE statement: PostgreSQL runs a
 * data-modifying CTE atomically, so either both rows are written or neither
 * (a duplicate transition id aborts the update too). The INSERT selects from
 * the UPDATE's result, so a lost CAS writes no log row. False when the task
 * is not at `fromVersion` any more.
 */
async function compareAndSwap(db: Db | Tx, r: TransitionRecord, fencingToken?: string, options: { audited?: boolean } = {}): Promise<boolean> {
  // Lease rule (leaseRefusal in lib/model/leases/lease-rules.ts), checked in the
  // same statement as the version: with a token, it must be the writer's
  // current unexpired lease; without one, an agent may not write while any
  // lease is live, its own identity's too (another process of the same
  // agent may hold it). People are not fenced (an operator may cancel a
  // leased task); the version still guards.
  const token = fencingToken ?? null;
  const isAgent = r.actor.kind === "agent";
  const updated = Prisma.sql`
      UPDATE tasks
         SET status = ${r.toStatus}, version = ${r.toVersion}, state = ${JSON.stringify(r.stateAfter)}::jsonb,
             updated_at = ${r.createdAt.toISOString()}::timestamptz, updated_by = ${r.actor.identity}
       WHERE id = ${r.taskId} AND version = ${r.fromVersion}
         AND CASE
               WHEN ${token}::bigint IS NOT NULL THEN EXISTS (
                 SELECT 1 FROM leases l
                  WHERE l.task_id = ${r.taskId} AND l.fencing_token = ${token}::bigint AND l.holder = ${r.actor.identity} AND l.expires_at > now())
               WHEN ${isAgent} THEN NOT EXISTS (
                 SELECT 1 FROM leases l WHERE l.task_id = ${r.taskId} AND l.expires_at > now())
               ELSE true
             END
      RETURNING id, status, version, state, updated_at, updated_by`;
  // The log row takes state, status, version and time from the updated row,
  // so the (largest) state document crosses the wire and is parsed once.
  const logged = Prisma.sql`
    INSERT INTO transitions (id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind, reason, patch, state_after, request_digest, created_at)
    SELECT ${r.id}, u.id, ${r.fromVersion}, u.version, ${r.fromStatus}, u.status, u.updated_by, ${r.actor.kind}::"ActorKind",
           ${r.reason}, ${JSON.stringify(r.patch)}::jsonb, u.state, ${r.requestDigest}, u.updated_at
      FROM updated u`;
  // The audit entry is the same statement's last step, guarded on `logged`:
  // a stale or lease-refused write updates no row, logs none and records
  // nothing; and the chain's head is locked only after the task row and the
  // transition id, the order of every other writer. (Last, too, so that
  // pg_stat_activity's first 1 KiB of the statement still names the tables
  // it writes.) A restore passes audited: false: its restore record appends
  // the task.restored entry, with the checkpoint, in the same transaction.
  const statement =
    options.audited === false
      ? Prisma.sql`WITH updated AS (${updated}) ${logged} RETURNING 1`
      : Prisma.sql`WITH updated AS (${updated}), logged AS (${logged} RETURNING 1) ${auditEntryInsertSql(transitionAuditEntry(r), { onlyIfRowsIn: "logged" })} RETURNING 1`;
  const inserted = await directQuery<unknown>(db, statement, { prepare: "cas" });
  return inserted.length === 1;
}

interface PreparedTransition {
  before: TaskView;
  next: TaskState;
  record: TransitionRecord;
  /** The semantic boundary this transition crosses, if any (lib/model/checkpoints/checkpoint-boundaries.ts). */
  checkpointTrigger: ReturnType<typeof automaticCheckpointTrigger>;
}

/** The automatic checkpoint of a transition that crossed a boundary, in its transaction. Always true: it throws or is written. */
async function checkpointTransition(tx: Tx, { before, next, record, checkpointTrigger }: PreparedTransition): Promise<boolean> {
  if (!checkpointTrigger) return true;
  await takeCheckpointInTransaction(tx, {
    task: { id: before.id, workflowDigest: before.workflow.digest, intentId: before.intentId, createdBy: before.createdBy },
    state: next,
    trigger: checkpointTrigger,
    actor: record.actor,
    createdAt: record.createdAt,
  });
  return true;
}

/** Reads the task and checks everything that can be checked before the write; throws what fails. */
async function prepareTransition(
  db: Db | Tx,
  taskId: string,
  input: TransitionInput,
  actor: Actor,
  transitionId: string,
  requestDigest: string,
): Promise<PreparedTransition> {
  const patch = input.patch ?? {};
  const row = await findTaskRow(db, taskId);
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  if (row.version !== input.expected_version) throw new StaleVersion({ version: row.version, status: row.status });
  const def = workflowOfOrThrow(row);
  const before = toTaskView(row);
  const current = before.state;
  // Before: a state that already breaks an invariant is not built upon.
  const stored = checkStateInvariants(def, current);
  if (stored.length > 0) {
    throw new AppError("invariant_violated", "The stored state breaks an invariant; it must be recovered before it changes.", { violations: stored });
  }
  // A frozen irreversible action is decided in the review queue, whose
  // decision moves the task itself (actor kind system); resolving the wait
  // by hand would leave the action frozen and the task moving on without it.
  if (current.status === "WAITING_FOR_HUMAN" && actor.kind !== "system" && (await hasUndecidedReview(db, taskId))) {
    const violation = { invariant: "review_decides_frozen_action", message: "This task waits on a frozen irreversible action: decide it in the review queue." };
    throw new AppError("invariant_violated", violation.message, { violations: [violation] });
  }
  const evaluation = evaluateTransition(def, current, { to: input.to ?? current.status, patch, actorKind: actor.kind });
  if (!evaluation.ok) {
    const message = evaluation.violations.map((v) => v.message).join(" ");
    if (evaluation.reason === "actor_not_permitted") throw new AppError("forbidden", message, { violations: evaluation.violations });
    throw new AppError("invariant_violated", message, { violations: evaluation.violations });
  }
  const now = new Date();
  const next: TaskState = { ...evaluation.next, version: row.version + 1, updated_at: now.toISOString(), updated_by: actor.identity };
  // After: the exact document about to be written is re-validated.
  assertValidState(def, next);
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
    requestDigest,
    createdAt: now,
  };
  return { before, next, record, checkpointTrigger: automaticCheckpointTrigger(def, current, next) };
}

function resultOf({ before, next, record }: PreparedTransition): TransitionResult {
  const task: TaskView = { ...before, status: next.status, version: next.version, state: next, updatedAt: record.createdAt, updatedBy: record.actor.identity };
  return { task, transition: transitionViewOf(record), replayed: false };
}

/**
 * A transition that must commit together with other writes of the caller's
 * transaction (an execution intent, a review decision). Same checks and the
 * same CAS as transitionTask; a lost CAS throws version_conflict and the
 * caller's transaction rolls back. Idempotent retries are the caller's to
 * handle, through its own unique keys.
 */
export async function transitionTaskInTransaction(tx: Tx, taskId: string, rawInput: unknown, actor: Actor): Promise<TransitionResult> {
  const input = parseOrThrow(TransitionInputSchema, rawInput);
  const transitionId = input.transition_id ?? newId("tr");
  const requestDigest = digestOf({ op: "transition", task_id: taskId, expected_version: input.expected_version, to: input.to, patch: input.patch ?? {}, reason: input.reason });
  let prepared: PreparedTransition;
  try {
    prepared = await prepareTransition(tx, taskId, input, actor, transitionId, requestDigest);
  } catch (error) {
    if (error instanceof StaleVersion && error.seen) throw versionConflict(input.expected_version, error.seen);
    throw error;
  }
  if (!(await compareAndSwap(tx, prepared.record, input.fencing_token))) {
    await throwIfLeaseRefused(tx, taskId, input.expected_version, input.fencing_token, actor);
    const latest = await tx.task.findUnique({ where: { id: taskId }, select: { version: true, status: true } });
    throw versionConflict(input.expected_version, latest ?? { version: -1, status: "deleted" });
  }
  await checkpointTransition(tx, prepared);
  return resultOf(prepared);
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
 * mandatory). Only lib/use-cases/checkpoints/checkpoints.ts calls this, after its own
 * checks; the lease is fenced there in the same transaction.
 */
export async function restoreTaskInTransaction(tx: Tx, taskId: string, input: RestoreTransitionInput, actor: Actor): Promise<TransitionResult> {
  const row = await findTaskRow(tx, taskId);
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  if (row.version !== input.expectedVersion) throw versionConflict(input.expectedVersion, row);
  const def = workflowOfOrThrow(row);
  const before = toTaskView(row);
  const now = new Date();
  const next: TaskState = { ...input.state, task_id: taskId, version: row.version + 1, updated_at: now.toISOString(), updated_by: actor.identity };
  assertValidState(def, next);
  const changes = checkChangeInvariants(before.state, next);
  if (changes.length > 0) throw new AppError("invariant_violated", changes.map((v) => v.message).join(" "), { violations: changes });
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
    requestDigest: input.requestDigest,
    createdAt: now,
  };
  if (!(await compareAndSwap(tx, record, undefined, { audited: false }))) {
    const latest = await tx.task.findUnique({ where: { id: taskId }, select: { version: true, status: true } });
    throw versionConflict(input.expectedVersion, latest ?? { version: -1, status: "deleted" });
  }
  return resultOf({ before, next, record, checkpointTrigger: null });
}

function versionConflict(expected: number, latest: { version: number; status: string }): AppError {
  return new AppError(
    "version_conflict",
    `Expected version ${expected}, but the task is at version ${latest.version} (${latest.status}). Read it again and retry.`,
    { currentVersion: latest.version, currentStatus: latest.status },
  );
}

/**
 * Explains a CAS that failed with the version still as expected: the lease
 * condition refused it. A worker presenting an old fencing token (its lease
 * expired and someone else holds the task now) or an agent writing without
 * one while another holds the lease never overwrites the holder's work.
 */
async function throwIfLeaseRefused(db: Db | Tx, taskId: string, expectedVersion: number, token: string | undefined, actor: Actor): Promise<void> {
  const task = await db.task.findUnique({ where: { id: taskId }, select: { version: true } });
  if (!task || task.version !== expectedVersion) return;
  const row = await db.lease.findUnique({ where: { taskId } });
  const lease = row ? leaseViewOf(row) : null;
  const refusal = leaseRefusal(lease, token, actor);
  // The lease changed between the refused write and this read (renewed,
  // released, taken): say so rather than name a lease that would pass.
  const why = refusal ?? `The lease of task ${taskId} changed while this write was refused (it is now ${lease ? describeLease(lease) : "gone"}). Read the lease and the task again`;
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
async function replayOrThrow(db: Db, prior: Transition, taskId: string, requestDigest: string): Promise<TransitionResult> {
  if (prior.taskId !== taskId || prior.requestDigest !== requestDigest) {
    throw new AppError("idempotency_conflict", `Transition id ${prior.id} was already used for a different request.`);
  }
  const state = TaskStateSchema.parse(prior.stateAfter);
  // The transitions → tasks foreign key guarantees the row.
  const origin = await db.task.findUniqueOrThrow({
    where: { id: prior.taskId },
    select: { workflowName: true, workflowVersion: true, workflowDigest: true, intentId: true, createdAt: true, createdBy: true },
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
    transition: toTransitionView(prior),
    replayed: true,
  };
}

interface TransitionRecord {
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
  requestDigest: string;
  createdAt: Date;
}

function transitionViewOf(r: TransitionRecord): TransitionView {
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

async function insertTransition(tx: Tx, r: TransitionRecord): Promise<TransitionView> {
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
      patch: r.patch as Prisma.InputJsonValue,
      stateAfter: r.stateAfter as unknown as Prisma.InputJsonValue,
      requestDigest: r.requestDigest,
      createdAt: r.createdAt,
    },
  });
  await appendAuditEntry(tx, transitionAuditEntry(r));
  return toTransitionView(row);
}

export async function getTask(db: Db, taskId: string): Promise<TaskView | null> {
  // Agents read before every write: this is half of the hot path.
  const row = await findTaskRow(db, taskId);
  return row ? toTaskView(row) : null;
}

export async function getTaskOrThrow(db: Db, taskId: string): Promise<TaskView> {
  const task = await getTask(db, taskId);
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return task;
}

export async function getTaskVersion(db: Db, taskId: string): Promise<number | null> {
  const row = await db.task.findUnique({ where: { id: taskId }, select: { version: true } });
  return row?.version ?? null;
}

export const ListTasksQuerySchema = z.strictObject({
  status: z.string().min(1).max(64).optional(),
  workflow: z.string().min(1).max(64).optional(),
  /** Task id or the start of one. */
  q: z.string().trim().min(1).max(128).optional(),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type ListTasksQuery = z.input<typeof ListTasksQuerySchema>;

export interface TaskPage {
  items: TaskView[];
  /** Opaque; pass back as `cursor` for the next page. Null on the last page. */
  nextCursor: string | null;
}

/**
 * Newest activity first, paged by keyset on (updated_at, id) so page 1,000 is
 * as cheap as page 1: each page is an index range scan, never an OFFSET.
 */
export async function listTasks(db: Db, rawQuery: ListTasksQuery): Promise<TaskPage> {
  const query = parseOrThrow(ListTasksQuerySchema, rawQuery);
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const where: Prisma.TaskWhereInput = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.workflow ? { workflowName: query.workflow } : {}),
    // Prisma sends startsWith as LIKE 'q%' without escaping: "task_" would match "taskX".
    ...(query.q ? { id: { startsWith: escapeLikePattern(query.q) } } : {}),
    ...(after
      ? {
          // The redundant `lte` lets PostgreSQL start the index scan at the cursor.
          updatedAt: { lte: after.updatedAt },
          OR: [{ updatedAt: { lt: after.updatedAt } }, { id: { lt: after.id } }],
        }
      : {}),
  };
  const rows = await db.task.findMany({ where, orderBy: [{ updatedAt: "desc" }, { id: "desc" }], take: query.limit + 1 });
  const items = rows.slice(0, query.limit).map(toTaskView);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null };
}

export async function countTasksByStatus(db: Db): Promise<Array<{ workflow: string; status: string; count: number }>> {
  const groups = await db.task.groupBy({ by: ["workflowName", "status"], _count: { _all: true } });
  return groups.map((g) => ({ workflow: g.workflowName, status: g.status, count: g._count._all }));
}

export async function listTransitions(db: Db, taskId: string, options: { afterVersion?: number; limit?: number } = {}): Promise<TransitionView[]> {
  const rows = await db.transition.findMany({
    where: { taskId, ...(options.afterVersion !== undefined ? { toVersion: { gt: options.afterVersion } } : {}) },
    orderBy: { toVersion: "asc" },
    take: Math.min(options.limit ?? 500, 1000),
  });
  return rows.map(toTransitionView);
}

/** LIKE's wildcards and its escape character (backslash, PostgreSQL's default), made literal. */
function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

/** A task page's cursor: the last row's (updated_at, id). */
const taskPageCursor = keysetCursor([keysetParts.instant, keysetParts.text], { notOurs: "not a cursor returned by this API" });

function encodeCursor(task: TaskView): string {
  return taskPageCursor.encode([task.updatedAt, task.id]);
}

function decodeCursor(cursor: string): { updatedAt: Date; id: string } {
  const [updatedAt, id] = taskPageCursor.decode(cursor);
  return { updatedAt, id };
}

function workflowOfOrThrow(row: Task): WorkflowDefinition {
  const def = getWorkflowByDigest(row.workflowDigest);
  if (!def) {
    throw new AppError("invariant_violated", `Task ${row.id} is pinned to workflow digest ${row.workflowDigest}, which this server does not have.`, {
      violations: [{ invariant: "workflow_definition_available", message: `Unknown workflow digest ${row.workflowDigest}.` }],
    });
  }
  return def;
}

function assertValidState(def: WorkflowDefinition, state: TaskState): void {
  const shape = TaskStateSchema.safeParse(state);
  if (!shape.success) {
    throw new AppError("validation_failed", "The resulting state does not match TaskState v2.", {
      errors: fieldErrorsFromZod(shape.error.issues as Parameters<typeof fieldErrorsFromZod>[0]),
    });
  }
  const violations = checkStateInvariants(def, state);
  if (violations.length > 0) throw new AppError("invariant_violated", violations.map((v) => v.message).join(" "), { violations });
}

export function toTaskView(row: Task): TaskView {
  return {
    id: row.id,
    workflow: { name: row.workflowName, version: row.workflowVersion, digest: row.workflowDigest },
    status: row.status,
    version: row.version,
    state: TaskStateSchema.parse(row.state),
    intentId: row.intentId,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
  };
}

function toTransitionView(row: Transition): TransitionView {
  return {
    id: row.id,
    taskId: row.taskId,
    fromVersion: row.fromVersion,
    toVersion: row.toVersion,
    fromStatus: row.fromStatus,
    toStatus: row.toStatus,
    actor: row.actor,
    actorKind: row.actorKind,
    reason: row.reason,
    patch: row.patch as TaskPatch,
    createdAt: row.createdAt,
  };
}

