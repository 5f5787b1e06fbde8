import type { Db } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import { lookupEffect, type ConnectorDeps, type EffectLookup } from "@/lib/connectors/effects";
import { providerRecordOf, LookupAnswerSchema } from "@/lib/connectors/tool-lookup/http-lookup";
import type { CallOptions } from "@/lib/connectors/types";
import { digestOf } from "@/lib/core/canonical-json";
import type { Actor } from "@/lib/model/actor";
import { expireLookup, getLookupOfAttempt, queueLookup, type LookupAnswer } from "@/lib/stores/effect-lookups";
import { toolOfExecutionOrThrow } from "@/lib/use-cases/tools/tool-of-execution";

/** The identity under which the engine queues and expires worker lookups. */
export const lookupQueueActor: Actor = { identity: "spiffe://verity.local/system/lookups", kind: "system" };

/**
 * What the provider holds under the execution's key, by the reconciliation
 * method of the tool version the call was recorded under: Verity's own
 * connectors (built-ins), the owner's signed http endpoint, the tool's
 * workers, or nobody (manual). Every engine path that asks — the
 * reconciler, a success report's confirmation, a review's "accept
 * evidence", an alert's reconcile action — asks here, so a registered tool
 * needs no code of its own.
 *
 * `worker`: the first ask queues a lookup for the attempt and answers
 * `unknown` / `lookup_pending` (the reconciler leaves the execution alone
 * while that holds); a worker's answer is returned from then on; past the
 * deadline unanswered, the lookup expires and the answer is
 * `unknown` / `lookup_expired`, which sends the execution to people.
 */
export async function lookUpEffect(
  db: Db,
  execution: Execution,
  deps: ConnectorDeps,
  call: CallOptions = {},
  now: Date = new Date(),
): Promise<EffectLookup> {
  const def = await toolOfExecutionOrThrow(db, execution);
  switch (def.reconciliation.method) {
    case "connector":
    case "http":
      return lookupEffect(execution, deps, call);
    case "manual":
      return {
        kind: "unknown",
        reason: "manual",
        message: `${execution.tool} is reconciled by people: nobody else can say whether it happened`,
      };
    case "worker": {
      const deadlineSeconds = def.reconciliation.deadline_seconds;
      let row = await getLookupOfAttempt(db, execution);
      if (!row)
        row = await queueLookup(db, execution, new Date(now.getTime() + deadlineSeconds * 1000), lookupQueueActor);
      if (row.status === "ANSWERED" && row.answer)
        return fromWorkerAnswer(execution, row.answer as LookupAnswer, row.answeredBy);
      if ((row.status === "QUEUED" || row.status === "CLAIMED") && row.deadlineAt <= now)
        row = await expireLookup(db, row, lookupQueueActor);
      if (row.status === "ANSWERED" && row.answer)
        return fromWorkerAnswer(execution, row.answer as LookupAnswer, row.answeredBy);
      if (row.status === "EXPIRED")
        return {
          kind: "unknown",
          reason: "lookup_expired",
          message: `no worker of ${execution.tool} answered lookup ${row.id} before ${row.deadlineAt.toISOString()}`,
        };
      return {
        kind: "unknown",
        reason: "lookup_pending",
        message: `lookup ${row.id} is ${row.status.toLowerCase()}${row.claimedBy ? ` by ${row.claimedBy}` : ""}; a worker of ${execution.tool} answers it by ${row.deadlineAt.toISOString()}`,
      };
    }
  }
}

function fromWorkerAnswer(execution: Execution, answer: LookupAnswer, answeredBy: string | null): EffectLookup {
  const evidence = {
    provider: `worker:${answeredBy ?? "unknown"}`,
    operation: `${execution.tool}.lookup`,
    idempotencyKey: execution.idempotencyKey,
    httpStatus: 200,
    providerRequestId: null,
    replayed: false,
    receivedAt: new Date().toISOString(),
    bodyDigest: digestOf(answer),
  };
  switch (answer.result) {
    case "found": {
      const parsed = LookupAnswerSchema.safeParse({
        idempotency_key: execution.idempotencyKey,
        result: "found",
        record: answer.record,
      });
      if (!parsed.success || parsed.data.result !== "found")
        return {
          kind: "unknown",
          reason: "unexpected_response",
          message: "the worker's record lacks an id or idempotency_key",
        };
      return { kind: "found", record: providerRecordOf(parsed.data.record), evidence };
    }
    case "not_found":
      return { kind: "not_found", evidence };
    case "unknown":
      return {
        kind: "unknown",
        reason: "in_flight",
        message: `the tool's worker cannot say${answer.reason ? `: ${answer.reason}` : ""}`,
      };
  }
}
