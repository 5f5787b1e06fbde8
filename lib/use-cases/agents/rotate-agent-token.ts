import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { rotateApiToken, type ApiTokenView } from "@/lib/stores/api-tokens";

/** The longest overlap: a rotation is a switch, not a second credential kept for months. */
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 86_400;

export const RotateAgentTokenInputSchema = z.strictObject({
  token_id: z.string().trim().min(1).max(64),
  overlap_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_ROTATION_OVERLAP_SECONDS, `must be at most ${MAX_ROTATION_OVERLAP_SECONDS} (30 days)`),
});

/**
 * A new token with the old one's scopes and lifetime (`tokens rotate`, the
 * console's Rotate); the old one keeps working for the overlap, so the
 * agent can switch without a gap, then expires. A revoked or expired token
 * is refused (invariant_violated): issue a new agent instead.
 */
export async function rotateAgentToken(
  db: Db,
  raw: z.input<typeof RotateAgentTokenInputSchema>,
  actor: AuditActor,
): Promise<{ token: string; view: ApiTokenView; previous: ApiTokenView }> {
  const input = parseOrThrow(RotateAgentTokenInputSchema, raw);
  const { token, view, previous } = await rotateApiToken(
    db,
    input.token_id,
    { overlapMs: input.overlap_seconds * 1000 },
    actor,
  );
  return { token, view, previous };
}
