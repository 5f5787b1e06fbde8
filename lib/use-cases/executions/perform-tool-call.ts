import { inSpan } from "@/lib/config/tracing";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError, isAppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { performEffect, type ConnectorDeps, type EffectOutcome } from "@/lib/connectors/effects";
import { getExecutionRowOrThrow, toExecutionView, type ExecutionView } from "@/lib/stores/execution-store";
import { retryableStatuses, succeededStatuses, type ExecutionStatus } from "@/lib/model/executions/execution-rules";
import type { TaskView } from "@/lib/stores/tasks/task-views";
import {
  executionRowWrittenFor,
  recordIntent,
  RecordIntentInputSchema,
  type IntentResult,
} from "@/lib/use-cases/executions/record-intent";
import { recordOutcome, type OutcomeResult } from "@/lib/use-cases/executions/record-outcome";
import { builtInDefinitionOf, BUILT_IN_TOOL_VERSION } from "@/lib/model/tools/built-in-tools";

/**
 * Verity makes the call for its agent, through the connector it holds for
 * the tool (a tool whose reconciliation method is `connector`: the built-in
 * refund and CRM note). The same ledger as an agent's own call, in two
 * commits around the call:
 *
 *   the intent, sent with itself   recordIntent with `send`: lease, instruction
 *                                  guard, budget, checkpoint, SENT (one commit)
 *   the call                       performEffect under the execution's key
 *   the outcome                    as the provider answered Verity (one commit)
 *
 * What this buys over the agent calling: the agent never holds the
 * provider's credentials, and a success stands on the provider's answer to
 * Verity's own request, so it needs no lookup to be believed (an agent's
 * report of an irreversible success is confirmed by one: confirm-at-provider).
 * A crash between the two commits leaves the attempt SENT, which the
 * reconciler settles by a lookup, as it does any other.
 */
export const PerformToolCallInputSchema = RecordIntentInputSchema.omit({ send: true }).extend({
  /** Where the task goes after a success: more work (RUNNING, default) or VALIDATING. */
  next_status: z.enum(["RUNNING", "VALIDATING"]).optional(),
});

export type PerformedToolCall =
  /** Called now: the provider's answer, recorded. `outcome` is the attempt's: succeeded, failed or unknown (reconciled later). */
  | {
      kind: "performed";
      outcome: EffectOutcome["kind"];
      execution: ExecutionView;
      task: TaskView | null;
      leaseConflict: OutcomeResult["leaseConflict"];
    }
  /** Not called: a receipt (already succeeded) or a call frozen for people, as recordIntent answers them. */
  | Exclude<IntentResult, { kind: "proceed" }>;

export interface PerformToolCallOptions {
  /** How long the provider has to answer before the outcome is recorded unknown (the reconciler settles it). */
  timeoutMs?: number;
}

/** performToolCall as a span of the request's trace (lib/config/tracing.ts). */
export function performToolCall(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
  deps: ConnectorDeps,
  options: PerformToolCallOptions = {},
): Promise<PerformedToolCall> {
  return inSpan("use-case performToolCall", { "verity.task_id": taskId }, () =>
    performToolCallUntraced(db, taskId, raw, actor, deps, options),
  );
}

async function performToolCallUntraced(
  db: Db,
  taskId: string,
  raw: unknown,
  actor: Actor,
  deps: ConnectorDeps,
  options: PerformToolCallOptions,
): Promise<PerformedToolCall> {
  const { next_status, ...intentInput } = parseOrThrow(PerformToolCallInputSchema, raw);
  // Only the built-ins have connectors (a registered tool may not declare one: validate-tool-definition.ts).
  const tool = builtInDefinitionOf(intentInput.tool, BUILT_IN_TOOL_VERSION);
  if (tool?.reconciliation.method !== "connector")
    throw new AppError(
      "invariant_violated",
      `Verity holds no connector for ${intentInput.tool}: its agent makes the call (record the intent with send, call the tool under the execution's idempotency key, report the outcome).`,
      {
        violations: [{ invariant: "tool_has_connector", message: `${intentInput.tool} is called by its agent` }],
        tool: intentInput.tool,
      },
    );
  const intent = await recordIntent(db, taskId, { ...intentInput, send: true }, actor);
  if (intent.kind !== "proceed") return intent;
  const sent = intent.execution;
  const outcome = await performEffect(sent, deps, { timeoutMs: options.timeoutMs });
  let recorded: OutcomeResult;
  try {
    recorded = await recordOutcome(
      db,
      sent.id,
      {
        attempt_id: sent.attemptId,
        fencing_token: intentInput.fencing_token,
        ...(next_status ? { next_status } : {}),
        ...outcomeReport(outcome),
      },
      actor,
      deps,
      {
        // The row the intent just wrote (sent with itself): the outcome is recorded on it, not on a read of it.
        written: executionRowWrittenFor(sent),
        ...(outcome.kind === "succeeded"
          ? {
              confirmedByCaller: {
                record: outcome.record,
                provider: outcome.evidence,
                why: "Verity made the call and read the provider's answer to it",
              },
            }
          : {}),
      },
    );
  } catch (error) {
    // The provider's webhook (or the reconciler) settled the attempt before
    // Verity recorded the answer (a version_conflict, or a move from a status
    // no longer SENT): their record stands, and is the answer.
    if (!isAppError(error)) throw error;
    const settled = await getExecutionRowOrThrow(db, sent.id);
    if (settled.status === "SENT") throw error;
    return {
      kind: "performed",
      outcome: outcomeOfStatus(settled.status),
      execution: toExecutionView(settled),
      task: null,
      leaseConflict: null,
    };
  }
  return {
    kind: "performed",
    outcome: outcome.kind,
    execution: recorded.execution,
    task: recorded.task,
    leaseConflict: recorded.leaseConflict,
  };
}

/** A settled attempt's status as the outcome it records (execution-rules' status lists). */
function outcomeOfStatus(status: ExecutionStatus): EffectOutcome["kind"] {
  if (succeededStatuses.includes(status)) return "succeeded";
  if (retryableStatuses.includes(status)) return "failed";
  return "unknown";
}

/** The provider's answer as recordOutcome's report. */
function outcomeReport(outcome: EffectOutcome) {
  if (outcome.kind === "succeeded")
    return { outcome: "succeeded" as const, result: outcome.record, evidence: { ...outcome.evidence } };
  return { outcome: outcome.kind, error: `${outcome.reason}: ${outcome.message}`.slice(0, 2000) };
}
