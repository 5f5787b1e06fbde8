import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import type { DivergenceAlert, Execution } from "@/lib/generated/prisma/client";
import { recordMismatches, type ConnectorDeps, type EffectLookup } from "@/lib/connectors/effects";
import { lookUpEffect } from "@/lib/use-cases/tools/look-up-effect";
import { recordAlertReconciliation, type ReconcileFinding } from "@/lib/use-cases/alerts/divergence";
import { retryableStatuses } from "@/lib/model/executions/execution-rules";
import {
  reconcileExecution,
  reconcileRecordedFailure,
  type ReconcileOptions,
  type ReconcileResult,
} from "@/lib/use-cases/reconciliation/reconciler";
import type { Actor } from "@/lib/model/actor";
import { findExecution } from "@/lib/stores/execution-store";

/**
 * The reconcile action on an alert: settle the execution with the provider
 * now (the reconciler's own reconcileExecution, for an outcome still
 * unknown; reconcileRecordedFailure for a recorded failure whose effect the
 * provider holds, which corrects it to RECONCILED_SUCCEEDED), ask the
 * provider what it holds under the key, and close the alert only if the
 * ledger and the provider agree. The provider calls run
 * outside any transaction; the alert's CAS (divergence.ts) is against the
 * version the person saw, so a change meanwhile is a conflict, not an
 * overwrite.
 */

export const AlertActionInputSchema = z.strictObject({
  expected_version: z.number().int().min(1),
  reason: z.string().trim().min(1, "a reason is required").max(2000),
});

export const AlertReconcileInputSchema = z.strictObject({
  expected_version: z.number().int().min(1),
  reason: z.string().trim().max(2000).optional(),
});

export interface AlertReconcileResult {
  alert: DivergenceAlert;
  finding: ReconcileFinding;
  /** What the reconciler did first (not_due when the outcome was already settled). */
  reconciled: Pick<ReconcileResult, "action" | "from"> | { action: "error"; message: string };
}

export async function reconcileAlert(
  db: Db,
  alertId: string,
  input: { expectedVersion: number },
  actor: Actor,
  deps: ConnectorDeps,
  options: ReconcileOptions = {},
): Promise<AlertReconcileResult> {
  const alert = await db.divergenceAlert.findUnique({ where: { id: alertId } });
  if (!alert) throw new AppError("not_found", `Alert ${alertId} does not exist.`);
  if (alert.version !== input.expectedVersion) {
    throw new AppError(
      "version_conflict",
      `Alert ${alertId} was not reconciled: it changed since you read it (you saw version ${input.expectedVersion}; it is now version ${alert.version}, ${alert.status}). Reload it and decide again.`,
      {
        currentVersion: alert.version,
        currentStatus: alert.status,
      },
    );
  }
  if (!alert.executionId) {
    const message =
      "This alert names no execution: there is nothing to ask a provider. Acknowledge, escalate or resolve it.";
    throw new AppError("invariant_violated", message, {
      violations: [{ invariant: "reconcile_needs_execution", message }],
    });
  }
  if (alert.status === "RESOLVED") {
    throw new AppError("version_conflict", `Alert ${alertId} is already RESOLVED.`, {
      currentVersion: alert.version,
      currentStatus: alert.status,
    });
  }
  let reconciled: AlertReconcileResult["reconciled"];
  try {
    const r = await reconcileExecution(db, alert.executionId, deps, options);
    // This alert is the person's to close below, with their finding; the correction resolves any other.
    const corrected =
      r.action === "not_due" && retryableStatuses.includes(r.from)
        ? await reconcileRecordedFailure(db, alert.executionId, deps, {
            lookupTimeoutMs: options.lookupTimeoutMs,
            keepAlertId: alert.id,
            actor,
          })
        : r;
    reconciled = { action: corrected.action, from: corrected.from };
  } catch (error) {
    // Someone settled it meanwhile (a worker, another reconciler): the lookup below judges what is recorded now.
    if (!isAppError(error) || error.code === "not_found") throw error;
    reconciled = { action: "error", message: error.message };
  }
  const execution = await findExecution(db, { id: alert.executionId });
  if (!execution) throw new AppError("not_found", `Execution ${alert.executionId} does not exist.`);
  const lookup = await lookUpEffect(db, execution, deps, { timeoutMs: options.lookupTimeoutMs });
  const finding = judgeAgreement(execution, lookup);
  const updated = await recordAlertReconciliation(
    db,
    alertId,
    {
      expectedVersion: input.expectedVersion,
      finding: { ...finding, evidence: { ...finding.evidence, reconciler: reconciled } },
    },
    actor,
  );
  return { alert: updated, finding, reconciled };
}

/**
 * Do the ledger and the provider agree now? A success needs the provider's
 * record, matching the request and naming this execution; a failure needs
 * the provider to hold nothing under the key. An outcome still unknown, or
 * a provider that cannot say, agrees with nothing.
 */
export function judgeAgreement(execution: Execution, lookup: EffectLookup): ReconcileFinding {
  const ledger = {
    execution_status: execution.status,
    version: execution.version,
    idempotency_key: execution.idempotencyKey,
  };
  if (lookup.kind === "unknown") {
    return {
      agreed: false,
      summary: `The provider could not say (${lookup.reason}: ${lookup.message}); the alert stays open.`,
      evidence: { ledger, lookup: "unknown", reason: lookup.reason, message: lookup.message },
    };
  }
  const provider =
    lookup.kind === "found"
      ? { lookup: "found", record: lookup.record, provider: lookup.evidence }
      : { lookup: "not_found", provider: lookup.evidence };
  const succeeded = execution.status === "SUCCEEDED" || execution.status === "RECONCILED_SUCCEEDED";
  const failed =
    execution.status === "FAILED" || execution.status === "RECONCILED_FAILED" || execution.status === "CANCELLED";
  if (succeeded && lookup.kind === "found") {
    const mismatches = recordMismatches(execution, lookup.record);
    if (mismatches.length === 0) {
      return {
        agreed: true,
        summary: `Reconciled: the ledger says ${execution.status} and the provider holds ${lookup.record.id} under key ${execution.idempotencyKey}, matching the request.`,
        evidence: { ledger, ...provider },
      };
    }
    return {
      agreed: false,
      summary: `The provider's record ${lookup.record.id} differs from the request in ${mismatches.join(", ")}; the alert stays open.`,
      evidence: { ledger, ...provider, mismatches },
    };
  }
  if (failed && lookup.kind === "not_found") {
    return {
      agreed: true,
      summary: `Reconciled: the ledger says ${execution.status} and the provider holds nothing under key ${execution.idempotencyKey}.`,
      evidence: { ledger, ...provider },
    };
  }
  if (succeeded) {
    return {
      agreed: false,
      summary: `The ledger says ${execution.status}, but the provider holds nothing under key ${execution.idempotencyKey}; the alert stays open.`,
      evidence: { ledger, ...provider },
    };
  }
  if (failed) {
    return {
      agreed: false,
      summary: `The ledger says ${execution.status}, but the provider holds ${lookup.kind === "found" ? lookup.record.id : "an effect"} under key ${execution.idempotencyKey}; the alert stays open.`,
      evidence: { ledger, ...provider },
    };
  }
  return {
    agreed: false,
    summary: `The execution is still ${execution.status}${lookup.kind === "found" ? `, though the provider holds ${lookup.record.id}` : ""}: nothing is settled yet; the alert stays open.`,
    evidence: { ledger, ...provider },
  };
}
