import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { revokeApiToken, type ApiTokenView } from "@/lib/stores/api-tokens";

export const RevokeAgentTokenInputSchema = z.strictObject({ token_id: z.string().trim().min(1).max(64) });

/**
 * Revokes one token by its id (`tokens revoke`, the console's Revoke): the
 * agent's next request with it is a 401. `alreadyRevoked` tells a second
 * revocation (someone else's, or a repeated click) from this one; the store
 * records only the first.
 */
export async function revokeAgentToken(
  db: Db,
  raw: z.input<typeof RevokeAgentTokenInputSchema>,
  actor: AuditActor,
): Promise<{ token: ApiTokenView; alreadyRevoked: boolean }> {
  const { token_id } = parseOrThrow(RevokeAgentTokenInputSchema, raw);
  const before = new Date();
  const token = await revokeApiToken(db, token_id, actor);
  return { token, alreadyRevoked: token.revokedAt !== null && token.revokedAt < before };
}
