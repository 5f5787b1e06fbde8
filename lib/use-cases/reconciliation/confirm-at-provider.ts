import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Execution } from "@/lib/generated/prisma/client";
import { recordMismatches, type ConnectorDeps, type ProviderRecord } from "@/lib/connectors/effects";
import { lookUpEffect } from "@/lib/use-cases/tools/look-up-effect";
import { raiseDivergence } from "@/lib/use-cases/alerts/divergence";
import type { Actor } from "@/lib/model/actor";

export interface SuccessEvidence {
  /** Where the provider's word came from. */
  source: "report" | "lookup" | "webhook";
  /** The provider's record, when it was read (a lookup, a webhook); null when only the worker's report carries the evidence. */
  record: ProviderRecord | null;
  /** The worker's report (its result and evidence), when there is one. */
  reported?: { result?: unknown; evidence?: unknown };
  /** The provider's answer around it: the lookup's evidence, the event's id, or why the provider could not be asked. */
  provider: unknown;
}

/**
 * A worker's word that an effect happened is checked against the provider's
 * own record before it settles anything: evidence an agent wrote itself
 * (`{"execution_id": …}` with no call behind it) names the execution as
 * well as a real receipt does, so only the provider's lookup under the
 * execution's idempotency key can tell them apart.
 *
 *   found, matching     the provider's record is the evidence (returned)
 *   found, different    not our effect: raised for people (effect_mismatch), refused (422)
 *   not found           the report is not believed: refused (422), nothing changes
 *   unknown             the provider could not be asked: returned with no
 *                       record; the caller decides whether the report may
 *                       stand on its own evidence or must wait for the check
 *
 * Asked outside any transaction; the caller's CAS is against the version it
 * read before.
 */
export async function confirmAtProvider(
  db: Db,
  row: Execution,
  report: { result?: Record<string, unknown>; evidence?: Record<string, unknown> },
  actor: Actor,
  deps: ConnectorDeps,
): Promise<SuccessEvidence> {
  const reported = {
    ...(report.result ? { result: report.result } : {}),
    ...(report.evidence ? { evidence: report.evidence } : {}),
  };
  // What is left standing when the report is refused, in words.
  const stands = row.status === "SENT" ? "the execution stays SENT" : `the recorded ${row.status} stands`;
  const lookup = await lookUpEffect(db, row, deps);
  switch (lookup.kind) {
    case "found": {
      const mismatches = recordMismatches(row, lookup.record);
      if (mismatches.length === 0)
        return {
          source: "report",
          record: lookup.record,
          reported,
          provider: { lookup: "found", evidence: lookup.evidence },
        };
      const alert = await db.$transaction((tx) =>
        raiseDivergence(
          tx,
          {
            taskId: row.taskId,
            executionId: row.id,
            kind: "effect_mismatch",
            message: `A success was reported for ${row.tool} (recorded ${row.status}), but the provider's record ${lookup.record.id} under key ${row.idempotencyKey} differs from the request in ${mismatches.join(", ")}.`,
            internal: {
              execution_status: row.status,
              request: row.request,
              idempotency_key: row.idempotencyKey,
              reported,
            },
            external: { record: lookup.record, provider: lookup.evidence, mismatches },
          },
          actor,
        ),
      );
      throw new AppError(
        "invariant_violated",
        `The provider's record ${lookup.record.id} under key ${row.idempotencyKey} differs from the request in ${mismatches.join(", ")}: it is not this effect, so ${stands} and alert ${alert.id} asks people to look.`,
        {
          violations: [
            { invariant: "success_matches_provider_record", message: `mismatches: ${mismatches.join(", ")}` },
          ],
          executionId: row.id,
        },
      );
    }
    case "not_found":
      throw new AppError(
        "invariant_violated",
        `The provider has nothing under key ${row.idempotencyKey}: the success reported for execution ${row.id} is not confirmed, and ${stands}.`,
        {
          violations: [
            { invariant: "success_confirmed_by_provider", message: `lookup of ${row.idempotencyKey}: not found` },
          ],
          executionId: row.id,
        },
      );
    case "unknown":
      return {
        source: "report",
        record: null,
        reported,
        provider: { lookup: "unknown", reason: lookup.reason, message: lookup.message },
      };
  }
}
