import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { AppError, isAppError } from "@/lib/core/errors";
import type { Execution, Prisma } from "@/lib/generated/prisma/client";
import { webhookEventSchema } from "@/lib/connectors/sandbox/contract";
import { recordMismatches, type ConnectorDeps, type EffectLookup, type ProviderRecord } from "@/lib/connectors/effects";
import { raiseDivergence, type DivergenceKind } from "@/lib/use-cases/alerts/divergence";
import {
  notAppliedResult,
  retryAdviceOf,
  retryableStatuses,
  type ExecutionStatus,
} from "@/lib/model/executions/execution-rules";
import {
  findExecution,
  findExecutions,
  getExecutionRowOrThrow,
  isPastAttemptLimit,
  moveExecution,
  toExecutionView,
  type ExecutionView,
} from "@/lib/stores/execution-store";
import { enqueueOutbox, receiveEvent, type ReceiveResult } from "@/lib/stores/messaging";
import { handFailureToPeople } from "@/lib/use-cases/reviews/hand-failure-to-people";
import { closeReviewForExecution, openReview } from "@/lib/stores/review-store";
import { moveTaskAfterSettlement } from "@/lib/use-cases/executions/settle-task";
import { settleSuccessAfterFailure } from "@/lib/use-cases/reconciliation/success-after-failure";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import { knownWorkflowDefinitions } from "@/lib/model/workflows";
import { lookUpEffect } from "@/lib/use-cases/tools/look-up-effect";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";
import { openTaskRow } from "@/lib/stores/tasks/task-views";

/**
 * Reconciliation: internal state → external verification → corrected state
 * (audit phase 9). An execution whose outcome is not known — OUTCOME_UNKNOWN,
 * or SENT for longer than VERITY_SENT_TIMEOUT_MS (its worker presumed dead) —
 * is looked up at the provider by its idempotency key, and only the answer
 * decides:
 *
 *   found      RECONCILED_SUCCEEDED, the provider's record as evidence; the
 *              task goes on to VALIDATING. A record that differs from the
 *              request (amount, currency, charge, customer) is not our effect:
 *              a divergence alert and people decide.
 *   not_found  RECONCILED_FAILED: never applied. The task goes back to
 *              RUNNING and its worker retries under the same key.
 *   unknown    NEEDS_HUMAN, a review opens, the task waits for people: an
 *              irreversible action is never retried on a guess (Invariant 5).
 *
 * An INTENT_RECORDED that old was never sent (SENT commits before a request
 * leaves): FAILED, and the task may retry. Both "nothing happened"
 * settlements store it in the execution's result (notAppliedResult), which
 * the execution's `retry` advice reads: retry_safe, so the agent and the
 * SDK retry under the same key. Past the tool's attempt limit the retry
 * would still be safe but is not automatic: the execution is handed to a
 * review (NEEDS_HUMAN, the task WAITING_FOR_HUMAN) in the same transaction,
 * so work the provider never did is never dropped silently.
 *
 * A settled failure whose effect the provider turns out to hold (a lookup
 * in verifySettled, a webhook) is corrected to RECONCILED_SUCCEEDED
 * (lib/use-cases/reconciliation/success-after-failure.ts). Every correction is a CAS on the
 * execution and the task in one transaction, so two reconcilers (two
 * processes) can run at once: the loser's CAS fails and it changes nothing.
 */

export const reconcilerActor: Actor = { identity: "spiffe://verity.local/system/reconciler", kind: "system" };
/** Provider events (webhooks) settle executions under this identity. */
export const inboxActor: Actor = { identity: "spiffe://verity.local/system/inbox", kind: "system" };

export type ReconcileAction =
  "reconciled_succeeded" | "reconciled_failed" | "needs_human" | "effect_mismatch" | "never_sent" | "not_due";

export interface ReconcileOptions {
  now?: Date;
  /** Defaults to VERITY_SENT_TIMEOUT_MS. */
  sentTimeoutMs?: number;
  lookupTimeoutMs?: number;
}

export interface ReconcileResult {
  executionId: string;
  action: ReconcileAction;
  /** The status the execution was found in. */
  from: ExecutionStatus;
  execution: ExecutionView;
  task: TaskView | null;
  lookup?: EffectLookup["kind"];
  reviewId?: string;
  alertId?: string;
}

/** Why an execution needs reconciling now, or null when it does not (yet). */
function dueReason(row: Execution, now: Date, sentTimeoutMs: number): string | null {
  switch (row.status) {
    case "OUTCOME_UNKNOWN":
      return "the outcome was unknown";
    case "SENT": {
      const age = now.getTime() - (row.sentAt ?? row.updatedAt).getTime();
      return age > sentTimeoutMs
        ? `sent ${Math.round(age / 1000)} s ago without an outcome (its worker is presumed dead)`
        : null;
    }
    case "INTENT_RECORDED": {
      const age = now.getTime() - row.updatedAt.getTime();
      return age > sentTimeoutMs
        ? `recorded ${Math.round(age / 1000)} s ago and never marked sent (its worker died before sending)`
        : null;
    }
    case "SUCCEEDED":
    case "FAILED":
    case "RECONCILED_SUCCEEDED":
    case "RECONCILED_FAILED":
    case "NEEDS_HUMAN":
    case "CANCELLED":
      return null;
  }
}

export async function reconcileExecution(
  db: Db,
  executionId: string,
  deps: ConnectorDeps,
  options: ReconcileOptions = {},
): Promise<ReconcileResult> {
  const now = options.now ?? new Date();
  const row = await getExecutionRowOrThrow(db, executionId);
  // Its attempt limit and identity fields are the recorded version's.
  await toolOfExecutionOrThrow(db, row);
  const why = dueReason(row, now, options.sentTimeoutMs ?? getEnv().VERITY_SENT_TIMEOUT_MS);
  const base = { executionId, from: row.status };
  if (!why) return { ...base, action: "not_due", execution: toExecutionView(row), task: null };

  if (row.status === "INTENT_RECORDED") {
    return db.$transaction(async (tx) => {
      const failed = await moveExecution(tx, row, "FAILED", reconcilerActor, {
        reason: `never sent: ${why}`,
        data: { error: "never sent", result: notAppliedResult("never_sent", why), settledAt: now },
      });
      const placed = await placeNotApplied(tx, failed, `${failed.tool} was never sent`);
      await announce(tx, placed.execution, row.status, "execution.reconciled");
      return {
        ...base,
        action: "never_sent",
        execution: toExecutionView(placed.execution),
        task: placed.task,
        ...(placed.reviewId ? { reviewId: placed.reviewId } : {}),
      };
    });
  }

  // The lookup is outside any transaction: a provider call never holds a
  // database transaction open. The CAS below is against the version read
  // before it, so a change meanwhile makes this pass a no-op.
  const lookup = await lookUpEffect(db, row, deps, { timeoutMs: options.lookupTimeoutMs }, now);
  // A worker lookup queued or claimed and not yet due: the tool's workers
  // are asked, so nothing is decided yet; past its deadline it is `lookup_expired`, below.
  if (lookup.kind === "unknown" && lookup.reason === "lookup_pending")
    return { ...base, action: "not_due", execution: toExecutionView(row), task: null, lookup: lookup.kind };
  return db.$transaction(async (tx): Promise<ReconcileResult> => {
    switch (lookup.kind) {
      case "found": {
        const settled = await settleFromRecord(
          tx,
          row,
          { source: "lookup", record: lookup.record, provider: lookup.evidence },
          reconcilerActor,
          why,
          now,
        );
        return { ...base, ...settled, lookup: lookup.kind };
      }
      case "not_found": {
        const evidence = { source: "lookup", idempotency_key: row.idempotencyKey, provider: lookup.evidence };
        const failed = await moveExecution(tx, row, "RECONCILED_FAILED", reconcilerActor, {
          reason: `${why}; the provider has nothing under its key: never applied`,
          evidence,
          data: {
            error: "not found at the provider",
            result: notAppliedResult(
              "never_applied",
              `${why}; the provider has nothing under key ${row.idempotencyKey}`,
            ),
            evidence: evidence as unknown as Prisma.InputJsonValue,
            settledAt: now,
          },
        });
        await closeReviewForExecution(tx, row.id, "the approved re-execution was never applied", reconcilerActor);
        const placed = await placeNotApplied(tx, failed, `${failed.tool} was never applied at the provider`);
        await announce(tx, placed.execution, row.status, "execution.reconciled");
        return {
          ...base,
          action: "reconciled_failed",
          execution: toExecutionView(placed.execution),
          task: placed.task,
          lookup: lookup.kind,
          ...(placed.reviewId ? { reviewId: placed.reviewId } : {}),
        };
      }
      case "unknown": {
        const frozen = await escalateToPeople(
          tx,
          row,
          `${why}; the provider could not say (${lookup.reason}: ${lookup.message})`,
          { source: "lookup", unknown: lookup },
          reconcilerActor,
        );
        return { ...base, action: "needs_human", ...frozen, lookup: lookup.kind };
      }
    }
  });
}

/**
 * Where a call the provider never did goes: back to its worker (the task to
 * RUNNING) to retry under the same key while its retry advice says that is
 * safe; past the tool's attempt limit, to a review.
 */
async function placeNotApplied(
  tx: Tx,
  failed: Execution,
  what: string,
): Promise<{ execution: Execution; task: TaskView | null; reviewId?: string }> {
  if (isPastAttemptLimit(failed)) return handFailureToPeople(tx, failed, reconcilerActor);
  const advice = retryAdviceOf(failed);
  const task = await moveTaskAfterSettlement(
    tx,
    failed,
    "RUNNING",
    reconcilerActor,
    `${what}: ${advice?.reason ?? "retry it under the same key"}`,
  );
  return { execution: failed, task };
}

/**
 * An execution settled as failed, looked up again at the provider (the
 * alert's reconcile action, lib/use-cases/alerts/alert-actions.ts): if the provider
 * holds the effect we asked for, the failure is corrected like any
 * discovery of it (settleSuccessAfterFailure). Anything else changes
 * nothing: `not_due`.
 */
export async function reconcileRecordedFailure(
  db: Db,
  executionId: string,
  deps: ConnectorDeps,
  options: { lookupTimeoutMs?: number; keepAlertId?: string; actor?: Actor } = {},
): Promise<ReconcileResult> {
  const row = await getExecutionRowOrThrow(db, executionId);
  const base = { executionId, from: row.status };
  if (!retryableStatuses.includes(row.status))
    return { ...base, action: "not_due", execution: toExecutionView(row), task: null };
  const lookup = await lookUpEffect(db, row, deps, { timeoutMs: options.lookupTimeoutMs });
  if (lookup.kind !== "found" || recordMismatches(row, lookup.record).length > 0) {
    return { ...base, action: "not_due", execution: toExecutionView(row), task: null, lookup: lookup.kind };
  }
  const actor = options.actor ?? reconcilerActor;
  return db.$transaction(async (tx) => {
    const corrected = await settleSuccessAfterFailure(
      tx,
      row,
      { source: "lookup", record: lookup.record, provider: lookup.evidence },
      { actor, taskActor: reconcilerActor },
      { why: `looked up again by ${actor.identity}`, keepAlertId: options.keepAlertId },
    );
    return {
      ...base,
      action: "reconciled_succeeded",
      execution: toExecutionView(corrected.execution),
      task: corrected.task.task,
      lookup: lookup.kind,
    };
  });
}

interface FoundRecord {
  source: "lookup" | "webhook";
  record: ProviderRecord;
  /** The provider's answer (a lookup's), or the event that carried the record. */
  provider: unknown;
}

/**
 * The provider holds a record under the execution's key. If it is the effect
 * we asked for, the execution succeeded and the task goes on; if it differs,
 * something else happened under our key, and people look at it.
 */
async function settleFromRecord(
  tx: Tx,
  row: Execution,
  found: FoundRecord,
  actor: Actor,
  why: string,
  now: Date,
): Promise<Pick<ReconcileResult, "action" | "execution" | "task" | "reviewId" | "alertId">> {
  const evidence = {
    source: found.source,
    idempotency_key: row.idempotencyKey,
    record: found.record,
    provider: found.provider,
  };
  const mismatches = recordMismatches(row, found.record);
  if (mismatches.length > 0) {
    const alert = await raiseAndAnnounce(tx, {
      taskId: row.taskId,
      executionId: row.id,
      kind: "effect_mismatch",
      message: `The provider's record ${found.record.id} under key ${row.idempotencyKey} differs from the request in ${mismatches.join(", ")}.`,
      internal: { execution_status: row.status, request: row.request, idempotency_key: row.idempotencyKey },
      external: { ...evidence, mismatches },
    });
    const frozen = await escalateToPeople(
      tx,
      row,
      `${why}; the provider's record ${found.record.id} differs from the request (${mismatches.join(", ")})`,
      evidence,
      actor,
    );
    return { action: "effect_mismatch", ...frozen, alertId: alert.id };
  }
  // The worker's own report would have been SUCCEEDED; a provider event about
  // a SENT attempt says the same thing. Everything else is a correction.
  const target: ExecutionStatus =
    row.status === "SENT" && found.source === "webhook" ? "SUCCEEDED" : "RECONCILED_SUCCEEDED";
  const settled = await moveExecution(tx, row, target, actor, {
    reason: `${why}; the provider has ${found.record.id} under its key`,
    evidence,
    data: {
      result: found.record as Prisma.InputJsonValue,
      evidence: evidence as unknown as Prisma.InputJsonValue,
      error: null,
      settledAt: now,
    },
  });
  const task = await moveTaskAfterSettlement(
    tx,
    settled,
    "VALIDATING",
    actor,
    `${settled.tool} confirmed by the provider (${found.record.id})`,
  );
  await closeReviewForExecution(tx, row.id, `the provider confirmed ${found.record.id}`, actor);
  await announce(
    tx,
    settled,
    row.status,
    found.source === "webhook" ? "execution.settled_by_event" : "execution.reconciled",
  );
  return { action: "reconciled_succeeded", execution: toExecutionView(settled), task };
}

/** NEEDS_HUMAN, the task to WAITING_FOR_HUMAN, and a review: one transaction, so the queue never misses a frozen action. */
async function escalateToPeople(
  tx: Tx,
  row: Execution,
  why: string,
  evidence: unknown,
  actor: Actor,
): Promise<Pick<ReconcileResult, "execution" | "task" | "reviewId">> {
  const frozen = await moveExecution(tx, row, "NEEDS_HUMAN", actor, { reason: why, evidence });
  const task = await moveTaskAfterSettlement(
    tx,
    frozen,
    "WAITING_FOR_HUMAN",
    actor,
    `${frozen.tool}: outcome not established; waiting for review`,
  );
  const review = await openReview(tx, frozen, why, actor);
  await announce(tx, frozen, row.status, "execution.reconciled");
  return { execution: toExecutionView(frozen), task, reviewId: review.id };
}

async function announce(
  tx: Tx,
  execution: Execution,
  from: ExecutionStatus,
  topic: "execution.reconciled" | "execution.settled_by_event",
): Promise<void> {
  await enqueueOutbox(tx, {
    task_id: execution.taskId,
    topic,
    payload: { execution_id: execution.id, tool: execution.tool, from, to: execution.status },
  });
}

async function raiseAndAnnounce(tx: Tx, input: Parameters<typeof raiseDivergence>[1]) {
  const alert = await raiseDivergence(tx, input, reconcilerActor);
  await enqueueOutbox(tx, {
    task_id: input.taskId,
    topic: "divergence.raised",
    payload: { alert_id: alert.id, kind: alert.kind, execution_id: input.executionId ?? null },
  });
  return alert;
}

export interface ReconcileSummary {
  examined: number;
  counts: Record<ReconcileAction, number>;
  /** Another reconciler (or the worker, or a provider event) changed the execution first: nothing was written. */
  conflicts: number;
  errors: Array<{ executionId: string; code: string; message: string }>;
  results: ReconcileResult[];
}

/** Every execution due for reconciliation, oldest first, a few lookups at a time. */
export async function reconcileDue(
  db: Db,
  deps: ConnectorDeps,
  options: { now?: Date; limit?: number; sentTimeoutMs?: number; lookupTimeoutMs?: number; concurrency?: number } = {},
): Promise<ReconcileSummary> {
  const now = options.now ?? new Date();
  const sentTimeoutMs = options.sentTimeoutMs ?? getEnv().VERITY_SENT_TIMEOUT_MS;
  const cutoff = new Date(now.getTime() - sentTimeoutMs);
  const due = await db.execution.findMany({
    where: {
      OR: [
        { status: "OUTCOME_UNKNOWN" },
        { status: "SENT", sentAt: { lt: cutoff } },
        { status: "INTENT_RECORDED", updatedAt: { lt: cutoff } },
      ],
    },
    orderBy: { updatedAt: "asc" },
    take: options.limit ?? 50,
    select: { id: true },
  });
  const summary: ReconcileSummary = {
    examined: due.length,
    counts: {
      reconciled_succeeded: 0,
      reconciled_failed: 0,
      needs_human: 0,
      effect_mismatch: 0,
      never_sent: 0,
      not_due: 0,
    },
    conflicts: 0,
    errors: [],
    results: [],
  };
  await inPool(
    due.map((d) => d.id),
    options.concurrency ?? 4,
    async (executionId) => {
      try {
        const result = await reconcileExecution(db, executionId, deps, {
          now,
          sentTimeoutMs,
          lookupTimeoutMs: options.lookupTimeoutMs,
        });
        summary.counts[result.action]++;
        summary.results.push(result);
      } catch (error) {
        if (isAppError(error) && error.code === "version_conflict") summary.conflicts++;
        else
          summary.errors.push({
            executionId,
            code: isAppError(error) ? error.code : "internal",
            message: messageOf(error),
          });
      }
    },
  );
  return summary;
}

async function inPool<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}

const succeededSettled: readonly ExecutionStatus[] = ["SUCCEEDED", "RECONCILED_SUCCEEDED"];
const failedSettled: readonly ExecutionStatus[] = ["FAILED", "RECONCILED_FAILED"];

export interface VerifySummary {
  /** Settled executions looked up at their provider. */
  checked: number;
  /** Recorded failures whose effect the provider holds, corrected to RECONCILED_SUCCEEDED (lib/use-cases/reconciliation/success-after-failure.ts). */
  corrected: Array<{ executionId: string; taskId: string; task: string }>;
  /** The provider could not say: nothing concluded, asked again next time. */
  unknown: number;
  tasksChecked: number;
  raised: Array<{ alertId: string; kind: DivergenceKind; taskId: string; executionId: string | null }>;
}

const looseSubtasks = z.object({
  subtasks: z.array(z.object({ id: z.string(), mandatory: z.boolean(), status: z.string() })).default([]),
});

/**
 * Divergence detection over what is already settled: our record says one
 * thing, the provider (or the task's own subtasks) another. Nothing is
 * corrected automatically here: a settled execution may have moved money on
 * the strength of its record, so people look at each alert. An alert of the
 * same kind that a person already resolved is not raised again every pass.
 */
export async function verifySettled(
  db: Db,
  deps: ConnectorDeps,
  options: { sinceMs?: number; now?: Date; limit?: number; lookupTimeoutMs?: number } = {},
): Promise<VerifySummary> {
  const now = options.now ?? new Date();
  const since = new Date(now.getTime() - (options.sinceMs ?? 24 * 60 * 60 * 1000));
  const limit = options.limit ?? 100;
  const summary: VerifySummary = { checked: 0, corrected: [], unknown: 0, tasksChecked: 0, raised: [] };

  const settled = await findExecutions(db, {
    where: { status: { in: [...succeededSettled, ...failedSettled] }, settledAt: { gte: since } },
    orderBy: { settledAt: "desc" },
    take: limit,
  });
  for (const row of settled) {
    // Only tools someone can be asked about at any time: a worker lookup is queued for an unknown outcome, not for every settled call.
    const method = (await toolOfExecutionOrThrow(db, row)).reconciliation.method;
    if (method === "worker" || method === "manual") continue;
    const lookup = await lookUpEffect(db, row, deps, { timeoutMs: options.lookupTimeoutMs });
    summary.checked++;
    if (lookup.kind === "unknown") {
      summary.unknown++;
      continue;
    }
    // The provider's word wins over a recorded failure: corrected, not only raised.
    if (
      failedSettled.includes(row.status) &&
      lookup.kind === "found" &&
      recordMismatches(row, lookup.record).length === 0
    ) {
      const corrected = await db
        .$transaction(async (tx) => {
          const current = await tx.execution.findUnique({ where: { id: row.id }, select: { version: true } });
          if (current?.version !== row.version) return null;
          return settleSuccessAfterFailure(
            tx,
            row,
            { source: "lookup", record: lookup.record, provider: lookup.evidence },
            { actor: reconcilerActor, taskActor: reconcilerActor },
            { why: "verified against the provider", now },
          );
        })
        // A webhook or a worker's report corrected it (or a retry moved it) first: their record stands.
        .catch((error: unknown) => {
          if (isAppError(error) && error.code === "version_conflict") return null;
          throw error;
        });
      if (corrected) summary.corrected.push({ executionId: row.id, taskId: row.taskId, task: corrected.task.note });
      continue;
    }
    const finding = findingOf(row, lookup);
    if (!finding) continue;
    const alert = await db.$transaction(async (tx) => {
      // The execution may have moved since it was read (a retry sent it again): judge only what was looked up.
      const current = await tx.execution.findUnique({ where: { id: row.id }, select: { version: true } });
      if (current?.version !== row.version) return null;
      if (
        await tx.divergenceAlert.findFirst({ where: { executionId: row.id, kind: finding.kind }, select: { id: true } })
      )
        return null;
      return raiseAndAnnounce(tx, { taskId: row.taskId, executionId: row.id, ...finding });
    });
    if (alert) summary.raised.push({ alertId: alert.id, kind: finding.kind, taskId: row.taskId, executionId: row.id });
  }

  // Defense in depth: the transition rules refuse completion with a mandatory
  // subtask open, so a completed task that has one was written around them.
  const successStatuses = [
    ...new Set(
      knownWorkflowDefinitions().flatMap((d) =>
        Object.entries(d.states)
          .filter(([, s]) => s.success)
          .map(([name]) => name),
      ),
    ),
  ];
  const tasks = await db.task.findMany({
    where: { status: { in: successStatuses }, updatedAt: { gte: since } },
    orderBy: { updatedAt: "desc" },
    take: limit,
  });
  for (const task of tasks) {
    summary.tasksChecked++;
    const parsed = looseSubtasks.safeParse((await openTaskRow(db, task, "readable")).state);
    const open = parsed.success ? parsed.data.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED") : [];
    if (open.length === 0) continue;
    const kind: DivergenceKind = "completed_with_open_mandatory_subtask";
    const alert = await db.$transaction(async (tx) => {
      if (
        await tx.divergenceAlert.findFirst({
          where: { taskId: task.id, executionId: null, kind },
          select: { id: true },
        })
      )
        return null;
      return raiseAndAnnounce(tx, {
        taskId: task.id,
        kind,
        message: `Task ${task.id} is ${task.status} with mandatory subtask(s) ${open.map((s) => s.id).join(", ")} not completed.`,
        internal: { task_status: task.status, task_version: task.version, updated_by: task.updatedBy },
        external: { open_mandatory_subtasks: open },
      });
    });
    if (alert) summary.raised.push({ alertId: alert.id, kind, taskId: task.id, executionId: null });
  }
  return summary;
}

function findingOf(
  row: Execution,
  lookup: Exclude<EffectLookup, { kind: "unknown" }>,
): { kind: DivergenceKind; message: string; internal: unknown; external: unknown } | null {
  const internal = {
    execution_status: row.status,
    settled_at: row.settledAt,
    request: row.request,
    result: row.result,
    evidence: row.evidence,
    error: row.error,
  };
  if (succeededStatuses(row) && lookup.kind === "not_found") {
    return {
      kind: "effect_missing_at_provider",
      message: `${row.tool} is recorded ${row.status}, but the provider has nothing under key ${row.idempotencyKey}.`,
      internal,
      external: { lookup: "not_found", provider: lookup.evidence },
    };
  }
  if (succeededStatuses(row) && lookup.kind === "found") {
    const mismatches = recordMismatches(row, lookup.record);
    if (mismatches.length === 0) return null;
    return {
      kind: "effect_mismatch",
      message: `${row.tool} is recorded ${row.status}, but the provider's record ${lookup.record.id} differs from the request in ${mismatches.join(", ")}.`,
      internal,
      external: { lookup: "found", record: lookup.record, provider: lookup.evidence, mismatches },
    };
  }
  if (failedSettled.includes(row.status) && lookup.kind === "found") {
    // Reached only for a record that differs from the request (a matching one is corrected in verifySettled).
    const mismatches = recordMismatches(row, lookup.record);
    return {
      kind: "effect_found_after_failure",
      message: `${row.tool} is recorded ${row.status}, but the provider has ${lookup.record.id} under key ${row.idempotencyKey}${mismatches.length ? `, differing from the request in ${mismatches.join(", ")}` : ""}.`,
      internal,
      external: { lookup: "found", record: lookup.record, provider: lookup.evidence, mismatches },
    };
  }
  return null;
}

function succeededStatuses(row: Execution): boolean {
  return succeededSettled.includes(row.status);
}

/** What applying one provider event did; stored as the inbox row's result. */
export interface RefundEventResult {
  applied: boolean;
  outcome:
    | "settled"
    | "effect_mismatch"
    | "already_succeeded"
    | "corrected_after_failure"
    | "effect_found_after_failure"
    | "noted_for_review"
    | "not_sent_yet"
    | "unknown_execution";
  execution_id?: string;
  status?: ExecutionStatus;
  alert_id?: string;
}

/**
 * A provider's "refund succeeded" event, in the caller's transaction (from
 * receiveEvent, so a duplicate delivery never reaches here). It is evidence
 * like a lookup: it settles a SENT or unknown execution, and overturns a
 * recorded failure when the record is the effect we asked for (a record of
 * something else is raised for people).
 */
export async function applyRefundSucceeded(
  tx: Tx,
  event: { eventId: string; source: string; record: ProviderRecord },
): Promise<RefundEventResult> {
  const byId = event.record.metadata.execution_id
    ? await findExecution(tx, { id: event.record.metadata.execution_id })
    : null;
  const row = byId ?? (await findExecution(tx, { idempotencyKey: event.record.idempotency_key }));
  if (!row) return { applied: false, outcome: "unknown_execution" };
  const ids = { execution_id: row.id };
  const why = `${event.source} event ${event.eventId} reports ${event.record.id}`;
  const now = new Date();
  switch (row.status) {
    case "SENT":
    case "OUTCOME_UNKNOWN": {
      const settled = await settleFromRecord(
        tx,
        row,
        { source: "webhook", record: event.record, provider: { source: event.source, event_id: event.eventId } },
        inboxActor,
        why,
        now,
      );
      return {
        applied: true,
        outcome: settled.action === "effect_mismatch" ? "effect_mismatch" : "settled",
        ...ids,
        status: settled.execution.status,
        alert_id: settled.alertId,
      };
    }
    case "SUCCEEDED":
    case "RECONCILED_SUCCEEDED":
      return { applied: false, outcome: "already_succeeded", ...ids, status: row.status };
    case "FAILED":
    case "RECONCILED_FAILED":
      if (recordMismatches(row, event.record).length === 0) {
        const corrected = await settleSuccessAfterFailure(
          tx,
          row,
          { source: "webhook", record: event.record, provider: { source: event.source, event_id: event.eventId } },
          { actor: inboxActor, taskActor: inboxActor },
          { why, now },
        );
        return { applied: true, outcome: "corrected_after_failure", ...ids, status: corrected.execution.status };
      }
    // falls through: a record of something else under our key contradicts the failure, for people to look at
    case "CANCELLED": {
      const alert = await raiseAndAnnounce(tx, {
        taskId: row.taskId,
        executionId: row.id,
        kind: "effect_found_after_failure",
        message: `${row.tool} is recorded ${row.status}, but the provider reports ${event.record.id} under key ${row.idempotencyKey} (${event.source} event ${event.eventId}).`,
        internal: { execution_status: row.status, error: row.error, evidence: row.evidence },
        external: { source: event.source, event_id: event.eventId, record: event.record },
      });
      return { applied: true, outcome: "effect_found_after_failure", ...ids, status: row.status, alert_id: alert.id };
    }
    case "NEEDS_HUMAN": {
      // People are deciding: the event is a new fact for them (accepting the
      // evidence will find it at the provider), not a decision.
      const noted = await moveExecution(tx, row, "NEEDS_HUMAN", inboxActor, {
        reason: `${why}: evidence for the review`,
        evidence: { source: event.source, event_id: event.eventId, record: event.record },
      });
      return { applied: true, outcome: "noted_for_review", ...ids, status: noted.status };
    }
    case "INTENT_RECORDED":
      // A new attempt is about to go out under the same key; the provider will answer it with this record.
      return { applied: false, outcome: "not_sent_yet", ...ids, status: row.status };
  }
}

/**
 * The sandbox provider's webhook body, received once per event id. The
 * route verifies the signature (programs/sandbox/webhooks.ts) on the raw body
 * before handing the parsed JSON here.
 */
export async function receiveSandboxWebhook(db: Db, payload: unknown): Promise<ReceiveResult<RefundEventResult>> {
  const parsed = webhookEventSchema.safeParse(payload);
  if (!parsed.success) {
    throw new AppError(
      "validation_failed",
      `Not a sandbox refund event: ${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`,
    );
  }
  const event = parsed.data;
  const refund = event.data;
  const record: ProviderRecord = {
    id: refund.id,
    amount_cents: refund.amount_cents,
    currency: refund.currency,
    charge_id: refund.charge_id,
    customer_id: refund.customer_id,
    metadata: refund.metadata,
    idempotency_key: refund.idempotency_key,
    created_at: refund.created_at,
  };
  // The inbox row names the task when the metadata does (ours always does); a foreign value is kept out of it.
  const taskId = refund.metadata.task_id && refund.metadata.task_id.length <= 128 ? refund.metadata.task_id : undefined;
  return receiveEvent(
    db,
    { event_id: event.id, source: "sandbox", type: event.type, task_id: taskId, payload: event },
    (tx) => applyRefundSucceeded(tx, { eventId: event.id, source: "sandbox", record }),
  );
}
