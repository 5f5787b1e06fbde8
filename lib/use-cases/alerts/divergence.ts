import { directQuery, type Db, type Tx } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { Prisma, type DivergenceAlert, type Execution } from "@/lib/generated/prisma/client";
import type { AlertStatus } from "@/lib/generated/prisma/enums";
import { newId } from "@/lib/core/ids";
import { succeededStatuses } from "@/lib/model/executions/execution-rules";
import { alertActionAuditEntry, divergenceAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import {
  alertSeverityOf,
  blockingKinds,
  blockingStatuses,
  defaultFingerprint,
  unresolvedStatuses,
  type AlertKind,
  type AlertSeverity,
  type AlertSource,
  type DivergenceKind,
} from "@/lib/model/alerts/alert-kinds";
import { transitionTaskInTransaction } from "@/lib/stores/tasks/task-transitions";
import { openTaskView, type TaskView } from "@/lib/stores/tasks/task-views";
import type { Actor } from "@/lib/model/actor";
import { getWorkflowByDigest } from "@/lib/model/workflows";
import { evaluateTransition } from "@/lib/model/tasks/transition-rules";
import { readableJson, readableText, sealJson, sealText } from "@/lib/stores/field-encryption";

/**
 * The owner of `divergence_alerts`: everything the spec calls stale or
 * contradictory, raised by the reconciler and recorded outcomes (internal ≠
 * external) and by the continuous invariant monitor (lib/use-cases/monitor/run-monitor-pass.ts),
 * and the people's actions on them, each a CAS on the alert's version with
 * its audit entry in the same transaction. While a blocking alert
 * (alert-kinds.ts) is open or escalated on a task, nothing irreversible
 * proceeds on it (record-intent.ts and decide-review.ts ask hasOpenDivergence).
 *
 * Sealed at rest (docs/encryption.md): `internal` and `external` (the
 * ledger's and the provider's view of an effect: requests, records,
 * evidence, customer ids) and `resolution` (a person's words), with the
 * audit entries quoting them sealed. Every alert this module and
 * alert-queries.ts return is opened (openedAlert). The message stays in the
 * clear: it is the system's sentence naming kinds, fields and ids, never
 * their values, and it is what lists show.
 */
export type { AlertKind, DivergenceKind } from "@/lib/model/alerts/alert-kinds";

type SealedAlertColumn = "internal" | "external" | "resolution" | "reconciled";

/** Where an alert's confidential value is sealed: the context of its envelope. */
function alertContext(column: SealedAlertColumn, alertId: string): string {
  return `divergence_alerts.${column}:${alertId}`;
}

/**
 * The alert with its sealed values opened, for people and callers: alerts
 * are read, never acted on by their payloads, so a value whose key was
 * destroyed reads "[sealed value, unreadable: …]" and the alert is shown.
 */
export async function openedAlert<T extends DivergenceAlert>(db: Db | Tx, row: T): Promise<T> {
  const [internal, external, resolution] = await Promise.all([
    readableJson(db, row.internal, alertContext("internal", row.id)),
    readableJson(db, row.external, alertContext("external", row.id)),
    row.resolution === null ? null : readableText(db, row.resolution, alertContext("resolution", row.id)),
  ]);
  return { ...row, internal, external, resolution } as T;
}

export interface RaiseAlertInput {
  /** "" for an alert about no task (an audit chain of the auth or system stream). */
  taskId: string;
  executionId?: string | null;
  kind: AlertKind;
  message: string;
  internal: unknown;
  external: unknown;
  /** Defaults to alert-kinds.ts's severity of the kind. */
  severity?: AlertSeverity;
  /** Defaults to kind, task and execution. */
  fingerprint?: string;
  source?: AlertSource;
  /**
   * A problem found in data that only a person's correction changes (a task
   * at one version, a settled execution): once an alert with this
   * fingerprint was resolved, seeing the same data again raises nothing. The
   * fingerprint names the data's version, so a new write is a new problem.
   */
  finalOnceResolved?: boolean;
}

export interface RaisedAlert {
  alert: DivergenceAlert;
  /** False when an unresolved alert with the fingerprint existed: it counted one more occurrence. */
  created: boolean;
  /** Neither created nor counted: resolved for good (finalOnceResolved). */
  suppressed?: boolean;
}

/**
 * Raises an alert, or counts one more sighting on the unresolved alert of
 * the same fingerprint (occurrences + 1, last_seen_at): one alert per
 * problem however many passes see it. A transaction-scoped advisory lock on
 * the fingerprint orders two raisers of the same problem (two monitor
 * processes, the reconciler and the monitor): the second waits, then finds
 * the first's alert. Audited when created; a sighting is an observation,
 * not a change anyone made, and is not.
 */
export async function raiseAlert(tx: Tx, input: RaiseAlertInput, detectedBy: Actor): Promise<RaisedAlert> {
  const fingerprint = input.fingerprint ?? defaultFingerprint(input.kind, input.taskId, input.executionId);
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${fingerprint}, 0))`;
  const now = new Date();
  const open = await tx.divergenceAlert.findFirst({
    where: {
      status: { in: [...unresolvedStatuses] },
      OR: [
        { fingerprint },
        // Alerts raised before fingerprints existed: the old (task, execution, kind) rule.
        { fingerprint: null, taskId: input.taskId, executionId: input.executionId ?? null, kind: input.kind },
      ],
    },
    orderBy: { createdAt: "asc" },
  });
  if (open) {
    const counted = await tx.divergenceAlert.update({
      where: { id: open.id },
      data: { occurrences: { increment: 1 }, lastSeenAt: now, updatedAt: now },
    });
    return { alert: await openedAlert(tx, counted), created: false };
  }
  if (input.finalOnceResolved) {
    const resolved = await tx.divergenceAlert.findFirst({
      where: { fingerprint, status: "RESOLVED" },
      orderBy: { createdAt: "desc" },
    });
    if (resolved) return { alert: await openedAlert(tx, resolved), created: false, suppressed: true };
  }
  const id = newId("alert");
  const alert = await tx.divergenceAlert.create({
    data: {
      id,
      taskId: input.taskId,
      executionId: input.executionId ?? null,
      kind: input.kind,
      severity: input.severity ?? alertSeverityOf[input.kind],
      message: input.message.slice(0, 2000),
      internal: (await sealJson(tx, alertContext("internal", id), input.internal ?? {})) as Prisma.InputJsonValue,
      external: (await sealJson(tx, alertContext("external", id), input.external ?? {})) as Prisma.InputJsonValue,
      status: "OPEN",
      version: 1,
      source: input.source ?? "engine",
      fingerprint,
      occurrences: 1,
      createdAt: now,
      lastSeenAt: now,
      updatedAt: now,
    },
  });
  // The entry quotes internal and external as stored, sealed.
  await appendAuditEntry(tx, { ...divergenceAuditEntry(alert, detectedBy), taskId: alert.taskId || null });
  return { alert: await openedAlert(tx, alert), created: true };
}

/** `detectedBy`: the component whose check saw the disagreement (the reconciler, or the writer of the outcome that revealed it). */
export async function raiseDivergence(
  tx: Tx,
  input: {
    taskId: string;
    executionId?: string;
    kind: DivergenceKind;
    message: string;
    internal: unknown;
    external: unknown;
  },
  detectedBy: Actor,
): Promise<DivergenceAlert> {
  const source: AlertSource = detectedBy.kind === "system" ? "reconciler" : "outcome";
  return (await raiseAlert(tx, { ...input, source }, detectedBy)).alert;
}

/**
 * An irreversible effect that succeeded on a task which had already ended
 * without success (cancelled, failed): recorded, never hidden. The one rule
 * for the worker's outcome (move-task-after-tool.ts) and the system's settlement
 * (settle-task.ts).
 */
export async function raiseIfEffectAfterTaskEnded(
  tx: Tx,
  execution: Execution,
  task: { status: string; ended: boolean },
  detectedBy: Actor,
): Promise<void> {
  if (!task.ended || !execution.irreversible || !succeededStatuses.includes(execution.status)) return;
  await raiseDivergence(
    tx,
    {
      taskId: execution.taskId,
      executionId: execution.id,
      kind: "effect_after_task_ended",
      message: `${execution.tool} succeeded at the provider, but the task is already ${task.status}.`,
      internal: { task_status: task.status, execution_status: execution.status },
      external: { evidence: execution.evidence },
    },
    detectedBy,
  );
}

/** True while a blocking alert (alert-kinds.ts blockingKinds) is OPEN or ESCALATED on the task: no irreversible intent proceeds. */
export async function hasOpenDivergence(db: Db | Tx, taskId: string): Promise<boolean> {
  // Raw and prepared (directQuery): asked before every irreversible intent (issue 16).
  const [row] = await directQuery<{ open: boolean }>(
    db,
    Prisma.sql`SELECT EXISTS (
      SELECT 1 FROM divergence_alerts
       WHERE task_id = ${taskId} AND status::text IN (${Prisma.join([...blockingStatuses])})
         AND kind::text IN (${Prisma.join([...blockingKinds])})) AS open`,
    { prepare: "open_divergence" },
  );
  return row?.open === true;
}

export async function listDivergences(
  db: Db,
  filter: { taskId?: string; status?: "OPEN" | "RESOLVED" } = {},
): Promise<DivergenceAlert[]> {
  const rows = await db.divergenceAlert.findMany({
    where: { ...(filter.taskId ? { taskId: filter.taskId } : {}), ...(filter.status ? { status: filter.status } : {}) },
    orderBy: { createdAt: "desc" },
    take: 200,
  });
  return Promise.all(rows.map((row) => openedAlert(db, row)));
}

function requireReason(field: string, text: string): string {
  const trimmed = text.trim();
  if (!trimmed)
    throw new AppError("validation_failed", `${field}: a reason is required`, {
      errors: [{ field, message: "a reason is required" }],
    });
  if (trimmed.length > 2000)
    throw new AppError("validation_failed", `${field}: at most 2000 characters`, {
      errors: [{ field, message: "at most 2000 characters" }],
    });
  return trimmed;
}

/**
 * The alert's CAS: from one of `from` at `expectedVersion` to its next
 * version. A lost CAS (someone acted first, or the alert is not in a state
 * this action applies to) is a version_conflict in words, and nothing is
 * written, audit entry included. Returns the row as stored (a resolution
 * sealed), for the audit entry to quote; callers return it opened.
 */
async function casAlert(
  tx: Tx,
  alertId: string,
  expectedVersion: number,
  from: readonly AlertStatus[],
  data: Prisma.DivergenceAlertUpdateManyMutationInput,
  verb: string,
): Promise<DivergenceAlert> {
  const now = new Date();
  const resolution =
    typeof data.resolution === "string"
      ? { resolution: await sealText(tx, alertContext("resolution", alertId), data.resolution) }
      : {};
  const { count } = await tx.divergenceAlert.updateMany({
    where: { id: alertId, version: expectedVersion, status: { in: [...from] } },
    data: { ...data, ...resolution, version: expectedVersion + 1, updatedAt: now },
  });
  const alert = await tx.divergenceAlert.findUnique({ where: { id: alertId } });
  if (!alert) throw new AppError("not_found", `Alert ${alertId} does not exist.`);
  if (count === 0) {
    const why =
      alert.version !== expectedVersion
        ? `it changed since you read it (you saw version ${expectedVersion}; it is now version ${alert.version}, ${alert.status})`
        : `it is ${alert.status}, and only an alert that is ${from.join(" or ")} can be ${verb}`;
    throw new AppError("version_conflict", `Alert ${alertId} was not ${verb}: ${why}. Reload it and decide again.`, {
      currentVersion: alert.version,
      currentStatus: alert.status,
    });
  }
  return alert;
}

/** A person resolves an alert (with a reason), under CAS on the alert's version. */
export async function resolveDivergence(
  db: Db,
  alertId: string,
  input: { expectedVersion: number; resolution: string },
  actor: Actor,
): Promise<DivergenceAlert> {
  const resolution = requireReason("resolution", input.resolution);
  // The CAS and its audit entry commit together; a lost CAS records nothing.
  return db.$transaction(async (tx) => {
    const alert = await casAlert(
      tx,
      alertId,
      input.expectedVersion,
      unresolvedStatuses,
      { status: "RESOLVED", resolvedAt: new Date(), resolvedBy: actor.identity, resolution },
      "resolved",
    );
    await appendAuditEntry(tx, { ...divergenceAuditEntry(alert, actor), taskId: alert.taskId || null });
    return openedAlert(tx, alert);
  });
}

/**
 * The system closes the unresolved alerts of `kinds` on an execution that a
 * correction of the ledger made agree with the provider (a recorded failure
 * overtaken by the provider's record of the effect): each one RESOLVED
 * through the same CAS on its version as a person's resolution, with its
 * audit entry, in the caller's transaction. `except`: an alert the caller
 * resolves itself with its own finding (a person's reconcile action).
 */
export async function resolveExecutionAlertsInTransaction(
  tx: Tx,
  input: { executionId: string; kinds: readonly AlertKind[]; resolution: string; except?: string },
  actor: Actor,
): Promise<DivergenceAlert[]> {
  const open = await tx.divergenceAlert.findMany({
    where: {
      executionId: input.executionId,
      kind: { in: [...input.kinds] },
      status: { in: [...unresolvedStatuses] },
      ...(input.except ? { id: { not: input.except } } : {}),
    },
    orderBy: { createdAt: "asc" },
  });
  const resolution = input.resolution.slice(0, 2000);
  const resolved: DivergenceAlert[] = [];
  for (const alert of open) {
    const closed = await casAlert(
      tx,
      alert.id,
      alert.version,
      unresolvedStatuses,
      { status: "RESOLVED", resolvedAt: new Date(), resolvedBy: actor.identity, resolution },
      "resolved",
    );
    await appendAuditEntry(tx, { ...divergenceAuditEntry(closed, actor), taskId: closed.taskId || null });
    resolved.push(await openedAlert(tx, closed));
  }
  return resolved;
}

/**
 * A person looked and recorded why no correction is needed: ACKNOWLEDGED.
 * It stays visible and keeps counting sightings, but no longer blocks its
 * task (the reason is the person's answer to the block).
 */
export async function acknowledgeAlert(
  db: Db,
  alertId: string,
  input: { expectedVersion: number; reason: string },
  actor: Actor,
): Promise<DivergenceAlert> {
  const reason = requireReason("reason", input.reason);
  return db.$transaction(async (tx) => {
    const alert = await casAlert(
      tx,
      alertId,
      input.expectedVersion,
      ["OPEN", "ESCALATED"],
      { status: "ACKNOWLEDGED", resolution: reason },
      "acknowledged",
    );
    // The person's words as the row holds them, sealed.
    await appendAuditEntry(tx, alertActionAuditEntry(alert, "divergence.acknowledged", alert.resolution ?? "", actor));
    return openedAlert(tx, alert);
  });
}

/** Whom the system names when an escalation moves a task: the person is in the reason and the alert's audit entry. */
export const alertsActor: Actor = { identity: "spiffe://verity.local/system/alerts", kind: "system" };

export interface EscalationResult {
  alert: DivergenceAlert;
  /** The task's move to WAITING_FOR_HUMAN, or why it did not move, in words. */
  task: { moved: boolean; status: string | null; version: number | null; note: string };
}

/**
 * Hands the alert to people: ESCALATED, and the task to WAITING_FOR_HUMAN
 * when its workflow lets the system take it there from where it is (the
 * same transaction: both commit or neither). Where the workflow has no such
 * edge, the alert is escalated and the answer says why the task stayed. An
 * open review of the alert's execution is linked as its review.
 */
export async function escalateAlert(
  db: Db,
  alertId: string,
  input: { expectedVersion: number; reason: string },
  actor: Actor,
): Promise<EscalationResult> {
  const reason = requireReason("reason", input.reason);
  const current = await db.divergenceAlert.findUnique({ where: { id: alertId } });
  if (!current) throw new AppError("not_found", `Alert ${alertId} does not exist.`);
  return db.$transaction(async (tx) => {
    const review = current.executionId
      ? await tx.review.findFirst({
          where: { executionId: current.executionId, status: { in: ["OPEN", "ESCALATED"] } },
          select: { id: true },
        })
      : null;
    const alert = await casAlert(
      tx,
      alertId,
      input.expectedVersion,
      ["OPEN", "ACKNOWLEDGED"],
      { status: "ESCALATED", reviewId: review?.id ?? current.reviewId },
      "escalated",
    );
    const task = await moveTaskToPeople(tx, alert, reason, actor);
    await appendAuditEntry(
      tx,
      alertActionAuditEntry(alert, "divergence.escalated", reason, actor, {
        task_moved: task.moved,
        task_status: task.status,
        task_note: task.note,
        review_id: alert.reviewId,
      }),
    );
    return { alert: await openedAlert(tx, alert), task };
  });
}

async function moveTaskToPeople(
  tx: Tx,
  alert: DivergenceAlert,
  reason: string,
  actor: Actor,
): Promise<EscalationResult["task"]> {
  if (!alert.taskId) return { moved: false, status: null, version: null, note: "The alert is about no task." };
  const row = await tx.task.findFirst({ where: { id: alert.taskId } });
  if (!row) return { moved: false, status: null, version: null, note: `Task ${alert.taskId} does not exist.` };
  const stay = (note: string) => ({ moved: false, status: row.status, version: row.version, note });
  if (row.status === "WAITING_FOR_HUMAN") return stay("The task already waits for people.");
  const def = getWorkflowByDigest(row.workflowDigest);
  if (!def?.states.WAITING_FOR_HUMAN)
    return stay(`The task's workflow (${row.workflowName}) has no WAITING_FOR_HUMAN state; it stays ${row.status}.`);
  let view: TaskView;
  try {
    view = await openTaskView(tx, row);
  } catch (error) {
    return stay(
      isAppError(error) && error.code === "key_unavailable"
        ? `The task's stored state cannot be opened (an encryption key it needs is not available); it stays ${row.status}.`
        : `The task's stored state does not parse; it stays ${row.status} until it is recovered.`,
    );
  }
  const evaluation = evaluateTransition(def, view.state, {
    to: "WAITING_FOR_HUMAN",
    patch: {},
    actorKind: alertsActor.kind,
  });
  if (!evaluation.ok)
    return stay(`The task stays ${row.status}: ${evaluation.violations.map((v) => v.message).join(" ")}`);
  const moved = await transitionTaskInTransaction(
    tx,
    alert.taskId,
    {
      expected_version: row.version,
      to: "WAITING_FOR_HUMAN",
      reason: `alert ${alert.id} escalated by ${actor.identity}: ${reason}`.slice(0, 1000),
    },
    alertsActor,
  );
  return {
    moved: true,
    status: moved.task.status,
    version: moved.task.version,
    note: `The task moved ${row.status} → WAITING_FOR_HUMAN (version ${moved.task.version}).`,
  };
}

export interface ReconcileFinding {
  /** The ledger and the provider agree now: the alert is closed with this as its evidence. */
  agreed: boolean;
  /** What was concluded, in words: the resolution when agreed, the reason it stays open otherwise. */
  summary: string;
  /** What the provider said (the lookup), and what the ledger says now. */
  evidence: Record<string, unknown>;
}

/**
 * Records a reconcile action's finding (lib/use-cases/alerts/alert-actions.ts asked the
 * provider): RESOLVED with the provider's answer when the ledger and the
 * provider agree; otherwise the attempt is recorded (a new version, the
 * alert's status unchanged) so the history shows what the provider said.
 */
export async function recordAlertReconciliation(
  db: Db,
  alertId: string,
  input: { expectedVersion: number; finding: ReconcileFinding },
  actor: Actor,
): Promise<DivergenceAlert> {
  return db.$transaction(async (tx) => {
    const data: Prisma.DivergenceAlertUpdateManyMutationInput = input.finding.agreed
      ? {
          status: "RESOLVED",
          resolvedAt: new Date(),
          resolvedBy: actor.identity,
          resolution: input.finding.summary.slice(0, 2000),
        }
      : {};
    const alert = await casAlert(tx, alertId, input.expectedVersion, unresolvedStatuses, data, "reconciled");
    await appendAuditEntry(
      tx,
      alertActionAuditEntry(alert, "divergence.reconciled", input.finding.summary, actor, {
        agreed: input.finding.agreed,
        // What the provider answered (its record, a customer's): quoted sealed.
        provider: await sealJson(tx, alertContext("reconciled", alert.id), input.finding.evidence),
      }),
    );
    return openedAlert(tx, alert);
  });
}

/** Retention (lib/use-cases/retention/apply-task-retention.ts): a finished task's alerts, none of them unresolved (the use case checks it). */
export async function deleteAlertsOfTask(tx: Tx, taskId: string): Promise<{ divergence_alerts: number }> {
  return { divergence_alerts: (await tx.divergenceAlert.deleteMany({ where: { taskId } })).count };
}
