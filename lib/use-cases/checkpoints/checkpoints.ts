import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Prisma, Checkpoint, CheckpointRestore } from "@/lib/generated/prisma/client";
import { newId } from "@/lib/core/ids";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import type { CheckpointKeyring } from "@/lib/model/checkpoints/checkpoint-keys";
import { keyringOf, takeCheckpointInTransaction, type CheckpointOptions } from "@/lib/stores/checkpoint-store";

export type { CheckpointOptions, TakeCheckpointInput } from "@/lib/stores/checkpoint-store";
import { verifyStoredCheckpoint, type StoredCheckpoint, type VerifiedCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";
import { currentPolicyVersion } from "@/lib/model/checkpoints/checkpoint-policy";
import { classifyEffects, decideRestore, diffStates, pathToFailure, restorePatchOf } from "@/lib/model/checkpoints/checkpoint-restore-rules";
import { CheckpointTriggerSchema, type CheckpointDocument, type CheckpointTrigger } from "@/lib/model/checkpoints/checkpoint-schema";
import { fenceLeaseInTransaction } from "@/lib/stores/leases";
import { checkpointRestoreAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { hasOpenDivergence } from "@/lib/use-cases/alerts/divergence";
import { getTaskOrThrow, listTransitions } from "@/lib/use-cases/tasks/tasks";
import { restoreTaskInTransaction, transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import { toTaskView, type TaskView, type TransitionView } from "@/lib/stores/tasks/task-views";
import { parseOrThrow, clientIdSchema } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { TaskStateSchema, type TaskState } from "@/lib/model/tasks/task-state";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import type { CheckpointSummary, IntegrityReport, StateDiffEntry } from "@/lib/model/checkpoints/checkpoint-reports";
import { restoreRefusalCodes, type CheckpointRestoreView, type RestoreOutcome, type RestorePlan, type RestoreRefusal, type RestoreRefusalCode } from "@/lib/model/checkpoints/restore-plan";
import { getWorkflowByDigest } from "@/lib/model/workflows";

/**
 * The owner of `checkpoints` and `checkpoint_restores`.
 *
 * Pure parts live beside it: the document schema and migrator
 * (checkpoint-schema.ts, importable by client components), canonical bytes
 * (checkpoint-canonical.ts), keys and signatures (checkpoint-keys.ts),
 * redaction (checkpoint-redaction.ts), verification (checkpoint-integrity.ts)
 * and the rules of a restore plan (checkpoint-restore-rules.ts).
 */
export { checkpointTriggers, checkpointTriggerDescriptions, integrityCheckNames, type CheckpointTrigger, type CheckpointDocument } from "@/lib/model/checkpoints/checkpoint-schema";
export type { StoredCheckpoint } from "@/lib/model/checkpoints/checkpoint-integrity";

const clientId = clientIdSchema;

export const CreateCheckpointInputSchema = z.strictObject({
  /** The version you mean to capture; a task that moved on is a 409 rather than a checkpoint of something else. */
  expected_version: z.number().int().min(1).optional(),
  /** Retrying with the same id returns the first checkpoint and writes nothing. */
  checkpoint_id: clientId.optional(),
});
export type CreateCheckpointInput = z.input<typeof CreateCheckpointInputSchema>;

export const RestorePlanInputSchema = z.strictObject({
  /** Restore a checkpoint older than the committed state: the engineer's explicit choice. */
  rewind: z.boolean().default(false),
});
export type RestorePlanInput = z.input<typeof RestorePlanInputSchema>;

export const RestoreInputSchema = z.strictObject({
  /** The task version the plan was read at: a task that moved since is a 409, never a restore over newer state. */
  expected_version: z.number().int().min(1),
  rewind: z.boolean().default(false),
  reason: z.string().trim().min(1, "say why you restore").max(500),
  /** Retrying with the same id returns the first result and writes nothing. */
  restore_id: clientId.optional(),
});
export type RestoreInput = z.input<typeof RestoreInputSchema>;

export interface CheckpointDetail {
  summary: CheckpointSummary;
  /** The document (upgraded to v2, with its signature); null when the payload cannot be read. */
  document: CheckpointDocument | null;
  integrity: IntegrityReport;
  task: TaskView;
  /** before = the checkpoint's snapshot, after = the task's current state. Empty when the document is unreadable. */
  diffToCurrent: StateDiffEntry[];
}

export interface RestoreResult {
  plan: RestorePlan;
  task: TaskView;
  transition: TransitionView;
  restore: CheckpointRestoreView;
  /** True when this restore_id was already applied: nothing was written now. */
  replayed: boolean;
}

/** A checkpoint of the task's current committed state, on request (POST …/checkpoints, the console). */
export async function createCheckpoint(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<{ checkpoint: CheckpointSummary; created: boolean }> {
  const input = parseOrThrow(CreateCheckpointInputSchema, raw);
  if (input.checkpoint_id) {
    const prior = await db.checkpoint.findUnique({ where: { id: input.checkpoint_id } });
    if (prior) return { checkpoint: await replayCreate(db, prior, taskId, input.expected_version, options), created: false };
  }
  try {
    const row = await db.$transaction(async (tx) => {
      // FOR SHARE: no transition commits between reading the state and
      // reading what goes with it, so the checkpoint is of one moment.
      const locked = await tx.$queryRaw<Array<{ version: number }>>`SELECT version FROM tasks WHERE id = ${taskId} FOR SHARE`;
      if (!locked[0]) throw new AppError("not_found", `Task ${taskId} does not exist.`);
      const task = await tx.task.findUniqueOrThrow({ where: { id: taskId } });
      if (input.expected_version !== undefined && task.version !== input.expected_version) {
        throw new AppError("version_conflict", `Expected version ${input.expected_version}, but the task is at version ${task.version} (${task.status}). Read it again and retry.`, {
          currentVersion: task.version,
          currentStatus: task.status,
        });
      }
      const state = TaskStateSchema.safeParse(task.state);
      if (!state.success) {
        const message = `The stored state of task ${taskId} does not match TaskState v2; it is not checkpointed.`;
        throw new AppError("invariant_violated", message, { violations: [{ invariant: "checkpoint_of_valid_state", message }] });
      }
      return takeCheckpointInTransaction(
        tx,
        {
          task: { id: task.id, workflowDigest: task.workflowDigest, intentId: task.intentId, createdBy: task.createdBy },
          state: state.data,
          trigger: "on_demand",
          actor,
          checkpointId: input.checkpoint_id,
        },
        options,
      );
    });
    return { checkpoint: await summaryOf(db, row, options), created: true };
  } catch (error) {
    // A twin request with the same checkpoint_id committed first.
    if (input.checkpoint_id && isUniqueViolation(error)) {
      const twin = await db.checkpoint.findUnique({ where: { id: input.checkpoint_id } });
      if (twin) return { checkpoint: await replayCreate(db, twin, taskId, input.expected_version, options), created: false };
    }
    throw error;
  }
}

async function replayCreate(db: Db, prior: Checkpoint, taskId: string, expectedVersion: number | undefined, options: CheckpointOptions): Promise<CheckpointSummary> {
  if (prior.taskId !== taskId || prior.trigger !== "on_demand" || (expectedVersion !== undefined && prior.stateVersion !== expectedVersion)) {
    throw new AppError("idempotency_conflict", `Checkpoint id ${prior.id} was already used for a different request.`);
  }
  return summaryOf(db, prior, options);
}

/** The task's checkpoints, oldest first (the newest 500), each verified. */
export async function listCheckpoints(db: Db, taskId: string, options: CheckpointOptions = {}): Promise<CheckpointSummary[]> {
  const task = await db.task.findUnique({ where: { id: taskId }, select: { id: true, workflowDigest: true } });
  if (!task) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  const rows = await db.checkpoint.findMany({ where: { taskId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 500 });
  const keyring = keyringOf(options);
  return rows.reverse().map((row) => summarize(row, verifyStoredCheckpoint(row, keyring, { task })));
}

export async function getCheckpointDetail(db: Db, checkpointId: string, options: CheckpointOptions = {}): Promise<CheckpointDetail> {
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  const task = await getTaskOrThrow(db, row.taskId);
  const verified = verifyStoredCheckpoint(row, keyringOf(options), { task: { id: task.id, workflowDigest: task.workflow.digest } });
  const document = verified.parsed ? { ...verified.parsed.document, integrity: { ...verified.parsed.document.integrity, signature: row.signature } } : null;
  return {
    summary: summarize(row, verified),
    document,
    integrity: verified.report,
    task,
    diffToCurrent: document ? diffStates(document.state_snapshot, task.state) : [],
  };
}

export async function verifyCheckpoint(db: Db, checkpointId: string, options: CheckpointOptions = {}): Promise<IntegrityReport> {
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  const task = await db.task.findUnique({ where: { id: row.taskId }, select: { id: true, workflowDigest: true } });
  return verifyStoredCheckpoint(row, keyringOf(options), { task }).report;
}

/** The dry run: what restoring would do, and whether it would be refused. Writes nothing. */
export async function planRestore(db: Db, checkpointId: string, raw: unknown, actor: Actor, options: CheckpointOptions = {}): Promise<RestorePlan> {
  const input = parseOrThrow(RestorePlanInputSchema, raw ?? {});
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  return buildPlan(db, row, input.rewind, actor, keyringOf(options));
}

/**
 * Applies a restore as a new transition (version n+1) or refuses it; either
 * way the attempt is recorded in checkpoint_restores, with its plan. Plan,
 * lease fencing, transition and record are one transaction, with the task
 * row locked from the plan to the write, so what was planned is what is
 * applied. Refusals throw: invariant_violated with the refusal code as the
 * invariant (details: restoreId, fallbackCheckpointId), version_conflict
 * when the task is not at expected_version.
 */
export async function restoreCheckpoint(db: Db, checkpointId: string, raw: unknown, actor: Actor, options: CheckpointOptions = {}): Promise<RestoreResult> {
  const input = parseOrThrow(RestoreInputSchema, raw);
  const requestDigest = digestOf({ op: "restore", checkpoint_id: checkpointId, expected_version: input.expected_version, rewind: input.rewind, reason: input.reason });
  if (input.restore_id) {
    const prior = await db.checkpointRestore.findUnique({ where: { id: input.restore_id } });
    if (prior) return replayRestore(db, prior, requestDigest);
  }
  const row = await getCheckpointRowOrThrow(db, checkpointId);
  const restoreId = input.restore_id ?? newId("rst");
  const keyring = keyringOf(options);
  type Attempt = { kind: "applied"; result: RestoreResult } | { kind: "refused"; restore: CheckpointRestore };
  let attempt: Attempt;
  try {
    attempt = await db.$transaction(async (tx): Promise<Attempt> => {
      await tx.$queryRaw`SELECT 1 FROM tasks WHERE id = ${row.taskId} FOR UPDATE`;
      const plan = await buildPlan(tx, row, input.rewind, actor, keyring);
      const record = { id: restoreId, taskId: row.taskId, checkpointId: row.id, rewind: input.rewind, fromVersion: plan.current.version, actor, reason: input.reason, requestDigest };
      if (plan.current.version !== input.expected_version) {
        const refusal: RestoreRefusal = {
          code: "version_conflict",
          message: `Expected version ${input.expected_version}, but the task is at version ${plan.current.version} (${plan.current.status}). Plan again.`,
        };
        return { kind: "refused", restore: await insertRestore(tx, { ...record, plan: { ...plan, allowed: false, refusal }, outcome: "refused" }) };
      }
      if (!plan.allowed || !plan.resultingState) return { kind: "refused", restore: await insertRestore(tx, { ...record, plan, outcome: "refused" }) };
      await fenceLeaseInTransaction(tx, row.taskId);
      const transitionId = newId("tr");
      const applied = await restoreTaskInTransaction(
        tx,
        row.taskId,
        {
          expectedVersion: input.expected_version,
          state: plan.resultingState,
          patch: restorePatchOf(plan.resultingState),
          reason: `restored from checkpoint ${row.id} (version ${row.stateVersion}): ${input.reason}`,
          transitionId,
          requestDigest,
        },
        actor,
      );
      const restore = await insertRestore(tx, { ...record, plan, outcome: "applied", toVersion: applied.task.version, transitionId });
      return { kind: "applied", result: { plan, task: applied.task, transition: applied.transition, restore: restoreViewOf(restore), replayed: false } };
    });
  } catch (error) {
    if (input.restore_id && isUniqueViolation(error)) {
      const twin = await db.checkpointRestore.findUnique({ where: { id: input.restore_id } });
      if (twin) return replayRestore(db, twin, requestDigest);
    }
    throw error;
  }
  if (attempt.kind === "refused") throw refusalError(attempt.restore);
  return attempt.result;
}

/** Every restore attempt on the task, newest first. */
export async function listRestores(db: Db, taskId: string): Promise<CheckpointRestoreView[]> {
  const rows = await db.checkpointRestore.findMany({ where: { taskId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 500 });
  return rows.map(restoreViewOf);
}

export type ResumePoint =
  /** The newest checkpoint that verifies; `skipped` are newer ones that did not. */
  | { kind: "checkpoint"; checkpoint: CheckpointSummary; skipped: CheckpointSummary[] }
  /** The task has no checkpoint: resume from its committed state. */
  | { kind: "no_checkpoint" }
  /** Every checkpoint failed verification: the task was ended (see failTaskWithoutValidCheckpoint). */
  | { kind: "failed"; task: TaskView; skipped: CheckpointSummary[] };

/**
 * The spec's recovery step 5 for a worker resuming a task: the newest
 * checkpoint that verifies is the resume point, falling back past corrupt
 * ones; when none verifies, the task is ended as failed with an audit
 * record saying why, rather than resumed from poison.
 */
export async function resumeFromNewestValidCheckpoint(db: Db, taskId: string, actor: Actor, options: CheckpointOptions = {}): Promise<ResumePoint> {
  const all = await listCheckpoints(db, taskId, options);
  if (all.length === 0) return { kind: "no_checkpoint" };
  const newestFirst = [...all].sort((a, b) => b.stateVersion - a.stateVersion || b.createdAt.getTime() - a.createdAt.getTime());
  const valid = newestFirst.findIndex((c) => c.integrity.ok);
  if (valid >= 0) return { kind: "checkpoint", checkpoint: newestFirst[valid]!, skipped: newestFirst.slice(0, valid) };
  const task = await failTaskWithoutValidCheckpoint(db, taskId, newestFirst, actor, options);
  return { kind: "failed", task, skipped: newestFirst };
}

/**
 * Ends a task that has no checkpoint to resume from along the shortest path
 * its workflow allows the actor to a failure state, in one transaction with
 * an audit record: the transitions say why, and a refused restore record
 * (code `corrupt`) names the newest checkpoint and what failed.
 */
export async function failTaskWithoutValidCheckpoint(
  db: Db,
  taskId: string,
  corrupt: readonly CheckpointSummary[],
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<TaskView> {
  const newest = corrupt[0];
  if (!newest) throw new AppError("validation_failed", "corrupt: name at least one checkpoint that failed verification");
  const why = `no valid checkpoint to resume from: ${corrupt
    .slice(0, 5)
    .map((c) => `${c.id} (${c.integrity.checks.filter((k) => !k.ok).map((k) => k.check).join(", ")})`)
    .join("; ")}`;
  const row = await getCheckpointRowOrThrow(db, newest.id);
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM tasks WHERE id = ${taskId} FOR UPDATE`;
    const plan = await buildPlan(tx, row, false, actor, keyringOf(options));
    if (plan.integrity.ok) throw new AppError("invariant_violated", `Checkpoint ${row.id} verifies; resume from it instead.`);
    const current = await getTaskOrThrowIn(tx, taskId);
    const def = workflowOf(current);
    const path = pathToFailure(def, current.status, actor.kind);
    if (!path) {
      const message = `Task ${taskId} is ${current.status}; its workflow has no path from there to a failure state that a ${actor.kind} may take.`;
      throw new AppError("invariant_violated", message, { violations: [{ invariant: "failure_state_reachable", message }] });
    }
    let task = current;
    for (const to of path) task = (await transitionTaskInTransaction(tx, taskId, { expected_version: task.version, to, reason: why.slice(0, 1000) }, actor)).task;
    await insertRestore(tx, {
      id: newId("rst"),
      taskId,
      checkpointId: row.id,
      rewind: false,
      fromVersion: current.version,
      actor,
      reason: `${why}; the task was ended ${task.status}`.slice(0, 2000),
      requestDigest: digestOf({ op: "fail_without_checkpoint", task_id: taskId, checkpoints: corrupt.map((c) => c.id) }),
      plan,
      outcome: "refused",
    });
    return task;
  });
}

/** A checkpoint row exactly as stored: what a standby imports (the bytes travel verbatim, signature and all). */
export async function exportCheckpoint(db: Db, checkpointId: string): Promise<StoredCheckpoint> {
  const { id, taskId, stateVersion, schemaVersion, trigger, payload, snapshotDigest, signature, keyId, createdAt, createdBy } = await getCheckpointRowOrThrow(db, checkpointId);
  return { id, taskId, stateVersion, schemaVersion, trigger, payload, snapshotDigest, signature, keyId, createdAt, createdBy };
}

/**
 * Stores a checkpoint taken elsewhere (the primary, before it was lost) on
 * this database, after verifying it against this database's task: a
 * standby never imports what it cannot verify. Importing the same bytes
 * twice is a no-op; different bytes under the same id are refused.
 */
export async function importCheckpoint(db: Db, record: StoredCheckpoint, options: CheckpointOptions = {}): Promise<CheckpointSummary> {
  const task = await db.task.findUnique({ where: { id: record.taskId }, select: { id: true, workflowDigest: true } });
  if (!task) throw new AppError("not_found", `Task ${record.taskId} does not exist on this database.`);
  const verified = verifyStoredCheckpoint(record, keyringOf(options), { task });
  if (!verified.report.ok) {
    const failed = verified.report.checks.filter((c) => !c.ok);
    throw new AppError("invariant_violated", `Checkpoint ${record.id} does not verify here: ${failed.map((c) => `${c.check}: ${c.message}`).join("; ")}`, {
      violations: failed.map((c) => ({ invariant: `checkpoint_${c.check}`, message: c.message })),
    });
  }
  const existing = await db.checkpoint.findUnique({ where: { id: record.id } });
  if (existing) {
    if (existing.payload !== record.payload || existing.signature !== record.signature) {
      throw new AppError("idempotency_conflict", `Checkpoint ${record.id} exists here with different bytes.`);
    }
    return summarize(existing, verified);
  }
  await db.checkpoint.create({ data: { ...record } });
  return summarize(record, verified);
}

/**
 * Failover: a standby whose copy of the task is older than a checkpoint the
 * primary took imports the checkpoint and rolls the task forward to it,
 * through the same verified restore path (a new transition on the standby,
 * its budget the greater of the two). `expected_version` is the standby's.
 */
export async function rollForwardFromCheckpoint(
  db: Db,
  record: StoredCheckpoint,
  raw: { expected_version: number; reason: string; restore_id?: string },
  actor: Actor,
  options: CheckpointOptions = {},
): Promise<RestoreResult> {
  await importCheckpoint(db, record, options);
  return restoreCheckpoint(db, record.id, { ...raw, rewind: false }, actor, options);
}

// ---------------------------------------------------------------------------
// Plans and records
// ---------------------------------------------------------------------------

async function buildPlan(reader: Db | Tx, row: Checkpoint, rewind: boolean, actor: Actor, keyring: CheckpointKeyring): Promise<RestorePlan> {
  const current = await getTaskOrThrowIn(reader, row.taskId);
  const def = workflowOf(current);
  const verified = verifyStoredCheckpoint(row, keyring, { task: { id: current.id, workflowDigest: current.workflow.digest } });
  const executions = await reader.execution.findMany({ where: { taskId: row.taskId }, orderBy: { createdAt: "asc" } });
  const undecided = await reader.review.findMany({ where: { taskId: row.taskId, status: { in: ["OPEN", "ESCALATED"] } }, select: { executionId: true } });
  // The alerts that block irreversible work block a restore too; a stale-write
  // or a stale-restore alert on the task does not (lib/use-cases/alerts/divergence.ts).
  const diverged = await hasOpenDivergence(reader, row.taskId);
  const leaseRows = await reader.$queryRaw<Array<{ holder: string; fencing_token: string; expires_at: Date; live: boolean }>>`
    SELECT holder, fencing_token::text AS fencing_token, expires_at, expires_at > now() AS live FROM leases WHERE task_id = ${row.taskId}`;
  const lease = leaseRows[0]?.live ? leaseRows[0] : null;
  const effects = classifyEffects(executions, new Set(undecided.map((r) => r.executionId)));
  const document = verified.parsed?.document ?? null;
  const decision = decideRestore({
    integrity: verified.report,
    def,
    current: current.state,
    checkpointVersion: row.stateVersion,
    snapshot: document?.state_snapshot ?? null,
    rewind,
    hasOpenDivergence: diverged,
    effects,
  });
  const refusalCode = decision.refusal?.code;
  const fallback = refusalCode === "corrupt" || refusalCode === "incompatible" ? await findFallback(reader, row, keyring, current) : null;
  const now = new Date();
  const resultingState = decision.resultingState
    ? { ...decision.resultingState, version: current.version + 1, updated_at: now.toISOString(), updated_by: actor.identity }
    : null;
  const consumed = (s: TaskState) => ({ currency_usd: s.budget.currency_spent_usd, tokens: s.budget.tokens_spent, hops: s.budget.hops_used });
  const checkpointConsumed = document?.budget_consumed ?? { currency_usd: 0, tokens: 0, hops: 0 };
  const policy = currentPolicyVersion();
  return {
    checkpointId: row.id,
    taskId: row.taskId,
    kind: decision.kind,
    rewind,
    allowed: decision.refusal === null,
    refusal: decision.refusal,
    fallbackCheckpointId: fallback?.id ?? null,
    fallbackMessage:
      refusalCode === "corrupt" || refusalCode === "incompatible"
        ? fallback
          ? `Checkpoint ${fallback.id} (version ${fallback.stateVersion}) is the newest earlier checkpoint that verifies.`
          : "No earlier checkpoint of this task verifies. A worker resuming this task ends it as failed, with an audit record (resumeFromNewestValidCheckpoint)."
        : null,
    integrity: verified.report,
    current: { version: current.version, status: current.status },
    checkpoint: { stateVersion: row.stateVersion, status: document?.state_snapshot.status ?? null, trigger: triggerOf(row.trigger), createdAt: row.createdAt },
    effects,
    reauthorization: {
      budget: {
        checkpoint: checkpointConsumed,
        current: consumed(current.state),
        resulting: resultingState ? consumed(resultingState) : consumed(current.state),
        committedUsd: current.state.budget.currency_committed_usd,
      },
      workflow: {
        checkpointDigest: document?.workflow_definition_digest ?? null,
        currentDigest: current.workflow.digest,
        name: def.name,
        version: def.version,
        compatible: verified.report.checks.some((c) => c.check === "workflow_compatible" && c.ok),
      },
      policyVersion: { checkpoint: document?.provenance.policy_version ?? null, current: policy, changed: !!document && document.provenance.policy_version !== policy },
      credentials: "Never stored in checkpoints: every worker authenticates with its own token and acquires a new lease after the restore.",
    },
    lease: {
      active: !!lease,
      holder: lease?.holder ?? null,
      fencingToken: lease?.fencing_token ?? null,
      expiresAt: lease ? new Date(lease.expires_at) : null,
      action: lease && decision.refusal === null ? "fence" : "none",
    },
    resultingState,
    diff: resultingState ? diffStates(current.state, resultingState) : [],
  };
}

async function findFallback(reader: Db | Tx, row: Checkpoint, keyring: CheckpointKeyring, task: TaskView): Promise<Checkpoint | null> {
  const earlier = await reader.checkpoint.findMany({
    where: {
      taskId: row.taskId,
      id: { not: row.id },
      OR: [{ stateVersion: { lt: row.stateVersion } }, { stateVersion: row.stateVersion, createdAt: { lt: row.createdAt } }],
    },
    orderBy: [{ stateVersion: "desc" }, { createdAt: "desc" }],
    take: 200,
  });
  const context = { task: { id: task.id, workflowDigest: task.workflow.digest } };
  return earlier.find((c) => verifyStoredCheckpoint(c, keyring, context).report.ok) ?? null;
}

interface RestoreRecord {
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
 * request with the same restore_id.
 */
async function insertRestore(tx: Tx, r: RestoreRecord): Promise<CheckpointRestore> {
  const stored = { ...(JSON.parse(JSON.stringify({ ...r.plan, resultingState: null })) as Record<string, unknown>), requestDigest: r.requestDigest };
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

function planOf(row: CheckpointRestore): RestorePlan & { requestDigest?: string } {
  const plan = row.plan as unknown as RestorePlan & { requestDigest?: string };
  return {
    ...plan,
    checkpoint: { ...plan.checkpoint, createdAt: new Date(plan.checkpoint.createdAt) },
    lease: { ...plan.lease, expiresAt: plan.lease.expiresAt ? new Date(plan.lease.expiresAt) : null },
  };
}

function restoreViewOf(row: CheckpointRestore): CheckpointRestoreView {
  const { requestDigest: _digest, ...plan } = planOf(row);
  return {
    id: row.id,
    taskId: row.taskId,
    checkpointId: row.checkpointId,
    outcome: row.outcome === "applied" ? "applied" : "refused",
    rewind: row.rewind,
    fromVersion: row.fromVersion,
    toVersion: row.toVersion,
    transitionId: row.transitionId,
    refusal: (restoreRefusalCodes as readonly string[]).includes(row.refusal ?? "") ? (row.refusal as RestoreRefusalCode) : null,
    plan,
    actor: row.actor,
    reason: row.reason,
    createdAt: row.createdAt,
  };
}

function refusalError(row: CheckpointRestore): AppError {
  const view = restoreViewOf(row);
  const refusal = view.plan.refusal ?? { code: "invalid_state" as const, message: "The restore was refused." };
  const details = { restoreId: row.id, fallbackCheckpointId: view.plan.fallbackCheckpointId ?? undefined };
  if (refusal.code === "version_conflict") {
    return new AppError("version_conflict", refusal.message, { ...details, currentVersion: view.plan.current.version, currentStatus: view.plan.current.status });
  }
  return new AppError("invariant_violated", refusal.message, { ...details, violations: [{ invariant: refusal.code, message: refusal.message }] });
}

async function replayRestore(db: Db, prior: CheckpointRestore, requestDigest: string): Promise<RestoreResult> {
  const { requestDigest: priorDigest } = planOf(prior);
  if (priorDigest !== requestDigest) throw new AppError("idempotency_conflict", `Restore id ${prior.id} was already used for a different request.`);
  if (prior.outcome !== "applied" || prior.toVersion === null) throw refusalError(prior);
  const [transition] = await listTransitions(db, prior.taskId, { afterVersion: prior.toVersion - 1, limit: 1 });
  if (!transition) throw new Error(`restore ${prior.id} names version ${prior.toVersion}, which its task does not have`);
  const restore = restoreViewOf(prior);
  return { plan: restore.plan, task: await getTaskOrThrow(db, prior.taskId), transition, restore, replayed: true };
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

async function getCheckpointRowOrThrow(db: Db | Tx, checkpointId: string): Promise<Checkpoint> {
  const row = await db.checkpoint.findUnique({ where: { id: checkpointId } });
  if (!row) throw new AppError("not_found", `Checkpoint ${checkpointId} does not exist.`);
  return row;
}

async function getTaskOrThrowIn(reader: Db | Tx, taskId: string): Promise<TaskView> {
  const row = await reader.task.findUnique({ where: { id: taskId } });
  if (!row) throw new AppError("not_found", `Task ${taskId} does not exist.`);
  return toTaskView(row);
}

function workflowOf(task: TaskView): WorkflowDefinition {
  const def = getWorkflowByDigest(task.workflow.digest);
  if (!def) {
    throw new AppError("invariant_violated", `Task ${task.id} is pinned to workflow digest ${task.workflow.digest}, which this server does not have.`, {
      violations: [{ invariant: "workflow_definition_available", message: `Unknown workflow digest ${task.workflow.digest}.` }],
    });
  }
  return def;
}

async function summaryOf(db: Db, row: StoredCheckpoint, options: CheckpointOptions): Promise<CheckpointSummary> {
  const task = await db.task.findUnique({ where: { id: row.taskId }, select: { id: true, workflowDigest: true } });
  return summarize(row, verifyStoredCheckpoint(row, keyringOf(options), { task }));
}

function summarize(row: StoredCheckpoint, verified: VerifiedCheckpoint): CheckpointSummary {
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
function triggerOf(value: string): CheckpointTrigger {
  const parsed = CheckpointTriggerSchema.safeParse(value);
  return parsed.success ? parsed.data : "on_demand";
}

