import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Execution, Prisma } from "@/lib/generated/prisma/client";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { resolveExecutionAlertsInTransaction } from "@/lib/use-cases/alerts/divergence";
import { confirmAtProvider, type SuccessEvidence } from "@/lib/use-cases/reconciliation/confirm-at-provider";
import { evidenceMatchesExecution, retryableStatuses } from "@/lib/model/executions/execution-rules";
import { moveExecution } from "@/lib/stores/execution-store";
import { enqueueOutbox } from "@/lib/stores/messaging";
import { moveTaskAfterCorrection, type CorrectionMove } from "@/lib/use-cases/executions/settle-task";
import type { Actor } from "@/lib/model/actor";

/**
 * The provider's word wins over a recorded failure. A failure says only
 * that one request applied nothing (lib/connectors/types.ts); another
 * request under the same idempotency key may have applied the effect — a
 * retry after a 503, a second worker, a request the provider finished
 * late. When the provider's record of the effect turns up for an execution
 * settled FAILED or RECONCILED_FAILED — in a worker's success report, in
 * the reconciler's lookup, in a signed webhook — and it is the effect we
 * asked for, the execution is corrected to RECONCILED_SUCCEEDED, in one
 * transaction:
 *
 *   the execution   RECONCILED_SUCCEEDED through moveExecution (CAS on its
 *                   version), its event carrying both records: the failure
 *                   as it was recorded and the provider's evidence now
 *   the task        on as after a success (settle-task.ts moveTaskAfterCorrection):
 *                   to VALIDATING from wherever the failure left it, left
 *                   alone where its agent carries on, or to people when it
 *                   had ended
 *   the alerts      effect_found_after_failure on the execution, which said
 *                   exactly this contradiction, RESOLVED by the system through
 *                   the alert CAS, audited
 *   the outbox      execution.reconciled, like every reconciliation
 *
 * A record that differs from the request is not our effect and corrects
 * nothing: it is raised (effect_mismatch) for people.
 */

export interface SuccessAfterFailure {
  execution: Execution;
  task: CorrectionMove;
  /** The alerts this correction resolved. */
  resolvedAlertIds: string[];
}

/**
 * Settles `row` (FAILED or RECONCILED_FAILED, at the version read) as
 * RECONCILED_SUCCEEDED on the provider's evidence, in the caller's
 * transaction. `actor` is who brought the evidence (the event's actor);
 * `taskActor` moves the task (a system identity: the correction is the
 * ledger's, and a worker's lease does not fence it). `keepAlertId`: an alert
 * the caller resolves itself.
 */
export async function settleSuccessAfterFailure(
  tx: Tx,
  row: Execution,
  found: SuccessEvidence,
  actors: { actor: Actor; taskActor: Actor },
  options: { why: string; now?: Date; keepAlertId?: string },
): Promise<SuccessAfterFailure> {
  if (!retryableStatuses.includes(row.status))
    throw new Error(`settleSuccessAfterFailure: execution ${row.id} is ${row.status}, not a recorded failure`);
  const now = options.now ?? new Date();
  const effectId = found.record?.id ?? effectIdOf(found.reported) ?? "its effect";
  const earlier = {
    status: row.status,
    attempt: row.attempt,
    attempt_id: row.attemptId,
    error: row.error,
    result: row.result,
    evidence: row.evidence,
    settled_at: row.settledAt?.toISOString() ?? null,
  };
  const evidence = {
    source: found.source,
    correction: "success_after_failure",
    idempotency_key: row.idempotencyKey,
    earlier,
    record: found.record,
    ...(found.reported ? { reported: found.reported } : {}),
    provider: found.provider,
  };
  const result =
    found.record ??
    (found.reported?.result as Prisma.InputJsonValue | undefined) ??
    (found.reported?.evidence as Prisma.InputJsonValue | undefined) ??
    null;
  const settled = await moveExecution(tx, row, "RECONCILED_SUCCEEDED", actors.actor, {
    reason:
      `${options.why}: the provider has ${effectId} under the key, which outweighs the recorded ${row.status}${row.error ? ` (${row.error})` : ""}`.slice(
        0,
        2000,
      ),
    evidence,
    data: {
      result: result as Prisma.InputJsonValue,
      evidence: evidence as unknown as Prisma.InputJsonValue,
      error: null,
      settledAt: now,
    },
  });
  const task = await moveTaskAfterCorrection(
    tx,
    settled,
    actors.taskActor,
    `${settled.tool} (${settled.toolCallId}) was recorded ${row.status}, but the provider has ${effectId} under its key: settled RECONCILED_SUCCEEDED, continuing as after a success`,
  );
  const resolved = await resolveExecutionAlertsInTransaction(
    tx,
    {
      executionId: row.id,
      kinds: ["effect_found_after_failure"],
      resolution: `Resolved by the system: the provider's record ${effectId} settled execution ${row.id} RECONCILED_SUCCEEDED (it was ${row.status}); ${task.note}.`,
      except: options.keepAlertId,
    },
    actors.taskActor,
  );
  await enqueueOutbox(tx, {
    task_id: settled.taskId,
    topic: "execution.reconciled",
    payload: { execution_id: settled.id, tool: settled.tool, from: row.status, to: settled.status },
  });
  return { execution: settled, task, resolvedAlertIds: resolved.map((a) => a.id) };
}

/**
 * A worker reports success for an execution already settled as failed: the
 * evidence must name the execution (Invariant 4, as for any success), and
 * the provider is asked what it holds under the key before anything is
 * corrected (confirm-at-provider.ts): its record, found and matching the
 * request, is the evidence; "nothing under the key" means the report is
 * not believed and the failure stands (422); a record of something else is
 * raised for people (422). A provider that cannot be asked leaves the
 * report's own evidence.
 */
export async function confirmReportedSuccess(
  db: Db,
  row: Execution,
  report: { result?: Record<string, unknown>; evidence?: Record<string, unknown> },
  actor: Actor,
  deps: ConnectorDeps,
): Promise<SuccessEvidence> {
  if (!evidenceMatchesExecution(report.evidence ?? report.result, row)) {
    throw new AppError(
      "invariant_violated",
      "Success needs evidence that names this execution (its id or idempotency key); without it the recorded failure stands.",
      {
        violations: [
          {
            invariant: "success_requires_matching_evidence",
            message: `No evidence names execution ${row.id} or key ${row.idempotencyKey}.`,
          },
        ],
      },
    );
  }
  return confirmAtProvider(db, row, report, actor, deps);
}

function effectIdOf(reported: SuccessEvidence["reported"]): string | undefined {
  for (const source of [reported?.result, reported?.evidence]) {
    if (!source || typeof source !== "object") continue;
    const s = source as Record<string, unknown>;
    const id = [s.refund_id, s.note_id, s.effect_id, s.id].find((v): v is string => typeof v === "string");
    if (id) return id;
  }
  return undefined;
}
