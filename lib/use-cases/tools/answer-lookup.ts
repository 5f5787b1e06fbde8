import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import type { EffectLookup as LookupRow } from "@/lib/generated/prisma/client";
import { requireToolInScope } from "@/lib/model/agent-scopes";
import { actorOf, type Principal } from "@/lib/model/permissions";
import { answerLookupRow, getLookupOrThrow, type LookupAnswer } from "@/lib/stores/effect-lookups";
import { jsonObjectSchema } from "@/lib/use-cases/executions/input-fields";
import { reconcileExecution, type ReconcileResult } from "@/lib/use-cases/reconciliation/reconciler";

const recordSchema = jsonObjectSchema.pipe(
  z.looseObject({
    id: z.string().min(1).max(256),
    idempotency_key: z.string().min(1).max(256),
    metadata: z.record(z.string(), z.string()).optional(),
  }),
);

export const AnswerLookupInputSchema = z.discriminatedUnion("result", [
  z.strictObject({
    fencing_token: z.number().int().min(1),
    result: z.literal("found"),
    /** The provider's record of the effect: compared field by field with the request (the tool's identity_fields). */
    record: recordSchema,
    evidence: jsonObjectSchema.optional(),
  }),
  z.strictObject({
    fencing_token: z.number().int().min(1),
    result: z.literal("not_found"),
    evidence: jsonObjectSchema.optional(),
  }),
  z.strictObject({
    fencing_token: z.number().int().min(1),
    result: z.literal("unknown"),
    reason: z.string().max(2000).optional(),
  }),
]);

export interface AnsweredLookup {
  lookup: LookupRow;
  /** The reconciler's pass over the execution right after the answer (null when the execution was not waiting on it). */
  reconciled: ReconcileResult | null;
}

/**
 * The claiming worker's answer (POST /api/v1/lookups/{id}/answer), taken
 * only under the fencing token of its live claim, then acted on at once:
 * the reconciler settles the execution by it (found and matching →
 * RECONCILED_SUCCEEDED; a record that differs → effect_mismatch and people;
 * not found → RECONCILED_FAILED, a retry under the same key; unknown →
 * people), exactly as for a provider Verity asks itself.
 */
export async function answerLookup(
  db: Db,
  lookupId: string,
  raw: unknown,
  principal: Principal,
  deps: ConnectorDeps,
): Promise<AnsweredLookup> {
  const input = parseOrThrow(AnswerLookupInputSchema, raw);
  if (principal.kind !== "agent" || !principal.scopes)
    throw new AppError(
      "forbidden",
      "Lookups are answered by a tool's workers: an agent token whose scopes cover the tool.",
    );
  const row = await getLookupOrThrow(db, lookupId);
  requireToolInScope(principal.scopes, row.tool);
  const answer: LookupAnswer =
    input.result === "found"
      ? { result: "found", record: input.record, ...(input.evidence ? { evidence: input.evidence } : {}) }
      : input.result === "not_found"
        ? { result: "not_found", ...(input.evidence ? { evidence: input.evidence } : {}) }
        : { result: "unknown", ...(input.reason ? { reason: input.reason } : {}) };
  const answered = await db.$transaction((tx) =>
    answerLookupRow(tx, row, input.fencing_token, answer, actorOf(principal)),
  );
  const execution = await db.execution.findUnique({ where: { id: row.executionId }, select: { status: true } });
  const waiting = execution?.status === "OUTCOME_UNKNOWN" || execution?.status === "SENT";
  return { lookup: answered, reconciled: waiting ? await reconcileExecution(db, row.executionId, deps) : null };
}
