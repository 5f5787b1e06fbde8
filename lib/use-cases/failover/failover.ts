import type { ProviderEvidence } from "@/lib/connectors/types";
import {
  noteRecord,
  recordMismatches,
  refundRecord,
  type ConnectorDeps,
  type ProviderRecord,
} from "@/lib/connectors/effects";
import { tenantOfConnection, type Db } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { sleep } from "@/lib/core/sleep";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { CheckpointOptions } from "@/lib/stores/checkpoint-store";
import { rollForwardFromCheckpoint } from "@/lib/use-cases/checkpoints/roll-forward-from-checkpoint";
import { exportCheckpoint } from "@/lib/use-cases/checkpoints/export-checkpoint";
import { listCheckpoints } from "@/lib/use-cases/checkpoints/list-checkpoints";
import type { CheckpointSummary } from "@/lib/model/checkpoints/checkpoint-reports";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { idempotencyKeyOf, listExecutions, type ExecutionView } from "@/lib/stores/execution-store";
import { succeededStatuses, type ExecutionStatus } from "@/lib/model/executions/execution-rules";
import { reconcileExecution, type ReconcileAction } from "@/lib/use-cases/reconciliation/reconciler";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import type { ToolName } from "@/lib/model/executions/tools";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getWorkflowByDigest } from "@/lib/model/workflows";

/**
 * Regional failover, on the standby (docs/recovery.md). The standby holds a
 * backup of the primary plus the checkpoints the primary shipped after it;
 * everything else the primary committed is lost, and in particular the
 * execution rows written after the backup: a checkpoint carries the task's
 * state and its receipt ids, not the ledger. Two steps per task, both
 * through the engine's public write paths:
 *
 *   1. takeOverTask — before any worker: every execution the backup left
 *      unsettled is reconciled (the lost primary may have sent it after the
 *      backup, so INTENT_RECORDED is not "never sent" here), and the newest
 *      shipped checkpoint that verifies and is newer than the backup's copy
 *      becomes the task's state (a restore: a new transition).
 *   2. recordCallsLostWithPrimary — run by the task's worker, under its
 *      lease, before it resumes: every call of its plan that the standby has
 *      no record of is looked up at the provider by its deterministic key.
 *      Nothing there → the worker makes the call, under the same key; the
 *      call's own effect, made by the lost primary → recorded as succeeded
 *      with the provider's record; anything uncertain → OUTCOME_UNKNOWN, and
 *      the reconciler decides.
 *
 * Nothing here calls a provider except to look up; no effect is caused.
 */

/** Who settles, on the standby, what the lost primary left unsettled. */
export const failoverActor: Actor = { identity: "spiffe://verity.local/system/failover", kind: "system" };

const unsettled: readonly ExecutionStatus[] = ["INTENT_RECORDED", "SENT", "OUTCOME_UNKNOWN"];

export interface SettledAtTakeover {
  executionId: string;
  toolCallId: string;
  from: ExecutionStatus;
  action: ReconcileAction;
}

export type RollForwardOutcome =
  /** No shipped checkpoint that verifies is newer than the backup's copy: the backup is the recovery point. */
  | { kind: "up_to_date" }
  | { kind: "rolled_forward"; checkpoint: CheckpointSummary; task: TaskView }
  /** The restore refused (by its code, e.g. awaiting_human when a settlement froze an effect for people). */
  | { kind: "refused"; checkpoint: CheckpointSummary; code: string; message: string };

export interface TakeoverReport {
  taskId: string;
  /** The task's version in the backup: the primary's history up to here survived without help. */
  backupVersion: number;
  settled: SettledAtTakeover[];
  rollForward: RollForwardOutcome;
  /** Newer shipped checkpoints passed over because they do not verify here. */
  skippedInvalid: number;
}

/**
 * Step 1 for one task, before any worker touches it. `engineer` is the
 * person running the failover (a restore is an engineer's act, audited as
 * theirs); `deps` are the providers, for the reconciler's lookups.
 */
export async function takeOverTask(
  db: Db,
  taskId: string,
  engineer: Actor,
  deps: ConnectorDeps,
  options: CheckpointOptions = {},
): Promise<TakeoverReport> {
  const before = await getTaskOrThrow(db, taskId);
  const newer = (await listCheckpoints(db, taskId, options)).filter((c) => c.stateVersion > before.version);
  const newestFirst = newer.sort(
    (a, b) => b.stateVersion - a.stateVersion || b.createdAt.getTime() - a.createdAt.getTime(),
  );
  const index = newestFirst.findIndex((c) => c.integrity.ok);
  const report = { taskId, backupVersion: before.version, skippedInvalid: index < 0 ? newestFirst.length : index };
  const checkpoint = newestFirst[index];
  if (!checkpoint)
    return {
      ...report,
      settled: await settleWhatTheBackupLeftOpen(db, taskId, deps, unsettled),
      rollForward: { kind: "up_to_date" },
    };

  // A restore refuses while an outcome is unknown, so SENT and
  // OUTCOME_UNKNOWN are settled before it; INTENT_RECORDED does not block it
  // and waits until after, because every transition the standby writes
  // first counts in the version the checkpoint's is compared with.
  const settled = await settleWhatTheBackupLeftOpen(db, taskId, deps, ["SENT", "OUTCOME_UNKNOWN"]);
  const current = settled.length > 0 ? await getTaskOrThrow(db, taskId) : before;
  let rollForward: RollForwardOutcome;
  try {
    const record = await exportCheckpoint(db, checkpoint.id);
    const reason = `regional failover: the primary's checkpoint of version ${checkpoint.stateVersion}, shipped before the primary was lost`;
    const { task } = await rollForwardFromCheckpoint(
      db,
      record,
      { expected_version: current.version, reason },
      engineer,
      options,
    );
    rollForward = { kind: "rolled_forward", checkpoint, task };
  } catch (error) {
    if (!isAppError(error) || (error.code !== "invariant_violated" && error.code !== "version_conflict")) throw error;
    const code =
      error.code === "version_conflict" ? "version_conflict" : (error.details.violations?.[0]?.invariant ?? error.code);
    rollForward = { kind: "refused", checkpoint, code, message: error.message };
  }
  settled.push(...(await settleWhatTheBackupLeftOpen(db, taskId, deps, ["INTENT_RECORDED"])));
  return { ...report, settled, rollForward };
}

/**
 * The backup's INTENT_RECORDED, SENT and OUTCOME_UNKNOWN rows of the task,
 * settled by the reconciler at takeover, before any worker resumes it. On
 * the primary an old INTENT_RECORDED proves the request never left (SENT
 * commits first), and the reconciler fails it as "never sent"; on a standby
 * it proves nothing, because the SENT may have committed on the primary
 * after the backup and the refund may exist. So each is first made SENT —
 * the ledger's "may have left" — then reported OUTCOME_UNKNOWN with the
 * reason, and only the provider's answer to the reconciler decides (the
 * row survived, so the provider's record names it: found is a success).
 * Restoring past an unsettled row would strand it: the reconciler would
 * later fail, as "never sent", a refund the primary made.
 */
async function settleWhatTheBackupLeftOpen(
  db: Db,
  taskId: string,
  deps: ConnectorDeps,
  statuses: readonly ExecutionStatus[],
): Promise<SettledAtTakeover[]> {
  const open = (await listExecutions(db, taskId)).filter((e) => statuses.includes(e.status));
  const settled: SettledAtTakeover[] = [];
  for (const execution of open) {
    await reportUnknown(
      db,
      execution,
      "the backup holds this call unsettled and the primary that held it was lost: it may have been sent after the backup",
      failoverActor,
    );
    const result = await reconcileExecution(db, execution.id, deps);
    settled.push({
      executionId: execution.id,
      toolCallId: execution.toolCallId,
      from: execution.status,
      action: result.action,
    });
  }
  return settled;
}

/** INTENT_RECORDED → SENT → OUTCOME_UNKNOWN, SENT → OUTCOME_UNKNOWN; OUTCOME_UNKNOWN stays. */
async function reportUnknown(
  db: Db,
  execution: ExecutionView,
  why: string,
  actor: Actor,
  fencing_token?: string,
): Promise<void> {
  if (execution.status === "INTENT_RECORDED")
    await markSent(
      db,
      execution.id,
      { attempt_id: execution.attemptId, ...(fencing_token ? { fencing_token } : {}) },
      actor,
    );
  if (execution.status === "INTENT_RECORDED" || execution.status === "SENT") {
    await recordOutcome(
      db,
      execution.id,
      {
        attempt_id: execution.attemptId,
        outcome: "unknown",
        error: why.slice(0, 2000),
        ...(fencing_token ? { fencing_token } : {}),
      },
      actor,
    );
  }
}

/** A call a worker's plan makes, as it would record it: the same tool_call_id gives the same idempotency key. */
export interface PlannedCall {
  tool_call_id: string;
  tool: ToolName;
  request: Record<string, unknown>;
  /** Where the plan sends the task after this call succeeds. */
  next_status: "RUNNING" | "VALIDATING";
}

export type LostCallOutcome =
  /** The standby has the call's execution: the normal protocol (receipt, resend of the same attempt, reconciliation) continues. */
  | { kind: "on_record"; toolCallId: string; executionId: string }
  /** No record here and nothing at the provider under its key: the call was never made, and the worker makes it. */
  | { kind: "not_made"; toolCallId: string }
  /** The provider holds this call's effect, made by the lost primary's execution: recorded here as succeeded, with the provider's record. */
  | {
      kind: "recorded_lost_effect";
      toolCallId: string;
      executionId: string;
      providerId: string;
      lostExecutionId: string;
    }
  /** The provider could not say, or holds something under the key that is not this call's effect: OUTCOME_UNKNOWN, for the reconciler. */
  | { kind: "recorded_unknown"; toolCallId: string; executionId: string; detail: string }
  /** Not looked at now: an earlier call of the plan has not succeeded here (it is waiting for the reconciler, people or a retry). */
  | { kind: "not_reached"; toolCallId: string };

export interface LostCallReport {
  calls: LostCallOutcome[];
  /** Set when the task waited (WAITING_FOR_TOOL) on an intent whose row did not survive and that never reached the provider: it went back to RUNNING. */
  releasedLostIntent: boolean;
  task: TaskView;
}

export interface LostCallOptions {
  /** How long a request still in flight at the provider (the lost primary's) is waited for before its outcome counts as unknown. */
  inFlightWaitMs?: number;
}

/**
 * Step 2 for one task, by its worker (an agent, holding the task's lease)
 * before it resumes, with the calls its plan makes, in order.
 *
 * Why the provider is asked first: the key is deterministic, but the
 * provider's record names the execution that made it (metadata
 * execution_id), and that row was lost with the primary. A new attempt made
 * blindly is not a duplicate (one key, one effect) but is refused as
 * `idempotency_key_reused` — an unknown outcome to the worker, which the
 * reconciler would find as a record naming an execution this ledger lacks
 * (an effect_mismatch for people) though the refund is this call's. A task the roll-forward left
 * WAITING_FOR_TOOL without the row of its intent would otherwise wait for
 * an outcome nobody will report.
 *
 * What each answer leads to:
 *   nothing under the key       the call was never made: the worker makes it
 *                               (a task left waiting on the lost intent goes
 *                               back to RUNNING first)
 *   this call's effect          every field of the request matches, the task
 *                               is this one, and the execution it names does
 *                               not exist here: the lost primary made it. It
 *                               is recorded (intent, sent, succeeded with the
 *                               provider's record as evidence) and the task
 *                               goes on, as after the worker's own success.
 *   in flight                   waited for, up to inFlightWaitMs
 *   no answer, or another       OUTCOME_UNKNOWN, and the reconciler decides
 *   effect under the key        (it opens a review for what it cannot settle)
 *
 * The middle case is decided here and not by the reconciler because the
 * reconciler (and the review queue's "accept evidence") refuse a record
 * naming an execution the ledger does not have, as an effect_mismatch; on a
 * standby that is exactly the lost primary's execution, and the review it
 * opens could be neither accepted nor re-executed.
 */
export async function recordCallsLostWithPrimary(
  db: Db,
  taskId: string,
  calls: readonly PlannedCall[],
  deps: ConnectorDeps,
  worker: Actor,
  lease: { fencing_token: string },
  options: LostCallOptions = {},
): Promise<LostCallReport> {
  let task = await getTaskOrThrow(db, taskId);
  const def = workflowOrThrow(task);
  if (def.states[task.status]?.terminal) return { calls: [], releasedLostIntent: false, task };
  const executions = await listExecutions(db, taskId);
  const outcomes: LostCallOutcome[] = [];
  const tenantId = await tenantOfConnection(db);
  // A later call is the plan's only once the earlier ones have succeeded:
  // recording it sooner would move the task away from the earlier call.
  let reached = true;
  for (const call of calls) {
    if (!reached) {
      outcomes.push({ kind: "not_reached", toolCallId: call.tool_call_id });
      continue;
    }
    const existing = executions.find((e) => e.toolCallId === call.tool_call_id);
    if (existing) {
      outcomes.push({ kind: "on_record", toolCallId: call.tool_call_id, executionId: existing.id });
      reached = succeededStatuses.includes(existing.status);
      continue;
    }
    const key = idempotencyKeyOf(tenantId, taskId, call.tool_call_id);
    const found = await lookupSettled(call.tool, key, deps, options.inFlightWaitMs ?? 10_000);
    if (found.kind === "not_found") {
      outcomes.push({ kind: "not_made", toolCallId: call.tool_call_id });
      reached = false;
      continue;
    }
    const lost: LostEffect =
      found.kind === "found"
        ? await lostEffectOf(db, taskId, call, key, found)
        : { ok: false, why: `the provider could not say what it holds under ${key} (${found.reason})` };
    task = await moveToRunning(
      db,
      task,
      def,
      worker,
      lease,
      `regional failover: ${call.tool} (${call.tool_call_id}) has no record here; ${lost.ok ? `the provider holds ${lost.record.id} under ${key}` : lost.why}`,
    );
    const intent = await recordIntent(
      db,
      taskId,
      {
        tool_call_id: call.tool_call_id,
        tool: call.tool,
        request: call.request,
        expected_version: task.version,
        fencing_token: lease.fencing_token,
      },
      worker,
    );
    const execution = intent.execution;
    if (lost.ok) {
      // SENT is the ledger's only way to a recorded outcome; nothing leaves here (docs/recovery.md, Limits).
      await markSent(db, execution.id, { attempt_id: execution.attemptId, fencing_token: lease.fencing_token }, worker);
      const evidence = {
        source: "failover_lookup",
        idempotency_key: key,
        lost_execution_id: lost.executionId,
        record: lost.record,
        provider: lost.evidence,
      };
      await recordOutcome(
        db,
        execution.id,
        {
          attempt_id: execution.attemptId,
          outcome: "succeeded",
          result: lost.record,
          evidence,
          next_status: call.next_status,
          fencing_token: lease.fencing_token,
        },
        worker,
        deps,
        {
          confirmedByCaller: {
            record: lost.record,
            provider: lost.evidence,
            why: `regional failover: the record names ${lost.executionId}, the lost primary's execution of this call`,
          },
        },
      );
      outcomes.push({
        kind: "recorded_lost_effect",
        toolCallId: call.tool_call_id,
        executionId: execution.id,
        providerId: lost.record.id,
        lostExecutionId: lost.executionId,
      });
    } else {
      await reportUnknown(
        db,
        execution,
        `made or maybe made by the primary that was lost, whose record of it did not survive the failover: ${lost.why}`,
        worker,
        lease.fencing_token,
      );
      outcomes.push({
        kind: "recorded_unknown",
        toolCallId: call.tool_call_id,
        executionId: execution.id,
        detail: lost.why,
      });
      reached = false;
    }
    task = await getTaskOrThrow(db, taskId);
  }
  let releasedLostIntent = false;
  const open = (await listExecutions(db, taskId)).some((e) => [...unsettled, "NEEDS_HUMAN"].includes(e.status));
  if (task.status === "WAITING_FOR_TOOL" && !open && outcomes.some((o) => o.kind === "not_made")) {
    // The task waits on an intent of which neither the standby nor the
    // provider knows anything: the one the primary committed never arrived.
    // (A task waiting with every call on record is its worker's to move on.)
    const reason =
      "regional failover: the intent recorded on the lost primary has no record here and nothing reached the provider under its key; the worker records it again";
    task = (
      await transitionTask(
        db,
        taskId,
        { expected_version: task.version, to: "RUNNING", reason, fencing_token: lease.fencing_token },
        worker,
      )
    ).task;
    releasedLostIntent = true;
  }
  return { calls: outcomes, releasedLostIntent, task };
}

type LostEffect =
  { ok: true; record: ProviderRecord; evidence: ProviderEvidence; executionId: string } | { ok: false; why: string };

/** Whether the provider's record under the key is this call's effect, made by an execution this database never had. */
async function lostEffectOf(
  db: Db,
  taskId: string,
  call: PlannedCall,
  key: string,
  found: { record: ProviderRecord; evidence: ProviderEvidence },
): Promise<LostEffect> {
  const { record, evidence } = found;
  const executionId = record.metadata.execution_id;
  // The record's own execution id is passed in, so only the request's fields and the key are compared.
  const mismatches = recordMismatches(
    {
      tenantId: await tenantOfConnection(db),
      id: executionId ?? "",
      tool: call.tool,
      request: call.request as Prisma.JsonValue,
      idempotencyKey: key,
    },
    record,
  );
  if (record.metadata.task_id !== taskId) mismatches.push("metadata.task_id");
  if (!executionId) mismatches.push("metadata.execution_id");
  else if (await db.execution.findUnique({ where: { id: executionId }, select: { id: true } }))
    mismatches.push("metadata.execution_id (an execution on record here)");
  if (executionId && mismatches.length === 0) return { ok: true, record, evidence, executionId };
  return {
    ok: false,
    why: `the provider holds ${record.id} under ${key}, which differs from this call in ${mismatches.join(", ")}`,
  };
}

type KeyLookup =
  | { kind: "found"; record: ProviderRecord; evidence: ProviderEvidence }
  | { kind: "not_found" }
  | { kind: "unknown"; reason: string };

/**
 * What the provider holds under a key, once no request with it is in
 * flight (or the wait is over). lookupEffect (lib/connectors/effects.ts)
 * takes an execution row, which is what is missing here.
 */
async function lookupSettled(tool: ToolName, key: string, deps: ConnectorDeps, waitMs: number): Promise<KeyLookup> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const answer = await lookupByKey(tool, key, deps);
    if (answer.kind !== "unknown" || !answer.inFlight || Date.now() >= deadline) return answer;
    await sleep(100);
  }
}

async function lookupByKey(
  tool: ToolName,
  key: string,
  deps: ConnectorDeps,
): Promise<KeyLookup & { inFlight?: boolean }> {
  const answer =
    tool === "payments.refund"
      ? await deps.payments
          .lookupRefund(key)
          .then((a) => (a.kind === "found" ? { ...a, record: refundRecord(a.refund) } : a))
      : await deps.crm.lookupNote(key).then((a) => (a.kind === "found" ? { ...a, record: noteRecord(a.note) } : a));
  switch (answer.kind) {
    case "found":
      return { kind: "found", record: answer.record, evidence: answer.evidence };
    case "not_found":
      return { kind: "not_found" };
    case "unknown":
      return {
        kind: "unknown",
        reason: `${answer.reason}: ${answer.message}`,
        inFlight: answer.reason === "in_flight",
      };
  }
}

/** Along the workflow's edges the worker may take, shortest first: recordIntent starts from RUNNING. */
async function moveToRunning(
  db: Db,
  task: TaskView,
  def: WorkflowDefinition,
  worker: Actor,
  lease: { fencing_token: string },
  reason: string,
): Promise<TaskView> {
  const path = shortestPath(def, task.status, "RUNNING", worker.kind);
  if (!path) {
    const message = `Task ${task.id} is ${task.status}; its workflow has no path to RUNNING that a ${worker.kind} may take, so a call lost with the primary cannot be recorded.`;
    throw new AppError("invariant_violated", message, { violations: [{ invariant: "lost_call_recordable", message }] });
  }
  let moved = task;
  for (const to of path)
    moved = (
      await transitionTask(
        db,
        task.id,
        { expected_version: moved.version, to, reason: reason.slice(0, 1000), fencing_token: lease.fencing_token },
        worker,
      )
    ).task;
  return moved;
}

function shortestPath(def: WorkflowDefinition, from: string, to: string, kind: Actor["kind"]): string[] | null {
  const previous = new Map<string, string>([[from, ""]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (at === to) {
      const path: string[] = [];
      for (let s = at; s !== from; s = previous.get(s)!) path.unshift(s);
      return path;
    }
    for (const edge of def.edges) {
      if (edge.from !== at || !edge.by.includes(kind) || previous.has(edge.to)) continue;
      previous.set(edge.to, at);
      queue.push(edge.to);
    }
  }
  return null;
}

function workflowOrThrow(task: TaskView): WorkflowDefinition {
  const def = getWorkflowByDigest(task.workflow.digest);
  if (!def)
    throw new AppError(
      "invariant_violated",
      `Task ${task.id} is pinned to workflow digest ${task.workflow.digest}, which this server does not have.`,
    );
  return def;
}
