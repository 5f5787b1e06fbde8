import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { Execution, EffectLookup as LookupRow } from "@/lib/generated/prisma/client";
import { requireToolInScope } from "@/lib/model/agent-scopes";
import type { Principal } from "@/lib/model/permissions";
import { actorOf } from "@/lib/model/permissions";
import { claimOldestLookup } from "@/lib/stores/effect-lookups";
import { getNewestToolVersion } from "@/lib/stores/tool-registry";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";

export const ClaimLookupInputSchema = z.strictObject({
  /** How long the claim holds before another worker may take the lookup (a killed worker's lookup is freed by this). */
  lease_seconds: z.number().int().min(5).max(600).default(60),
});

export interface ClaimedLookup {
  lookup: LookupRow;
  execution: Execution;
}

/**
 * A worker of a `worker`-reconciled tool claims the oldest open lookup of
 * it (POST /api/v1/tools/{name}/lookups/claim): only an agent whose token's
 * scopes cover the tool — the same scope that lets it call the tool — since
 * an answer decides whether an effect happened. Null: nothing to answer now.
 * The claim carries the call's request, which the worker needs to look the
 * effect up, and the fencing token its answer must carry.
 */
export async function claimLookup(
  db: Db,
  toolName: string,
  raw: unknown,
  principal: Principal,
): Promise<ClaimedLookup | null> {
  const input = parseOrThrow(ClaimLookupInputSchema, raw ?? {});
  if (principal.kind !== "agent" || !principal.scopes)
    throw new AppError(
      "forbidden",
      "Lookups are claimed by a tool's workers: an agent token whose scopes cover the tool.",
    );
  requireToolInScope(principal.scopes, toolName);
  const tool = await getNewestToolVersion(db, toolName);
  if (!tool) throw new AppError("not_found", `Tool ${toolName} is not registered.`);
  const lookup = await claimOldestLookup(db, toolName, actorOf(principal), input.lease_seconds * 1000);
  if (!lookup) return null;
  const execution = await getExecutionRowOrThrow(db, lookup.executionId);
  return { lookup, execution };
}
