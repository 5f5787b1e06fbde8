import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { agentIdentity, AgentNameSchema, AgentScopesSchema } from "@/lib/model/agent-scopes";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { issueApiToken, type ApiTokenView } from "@/lib/stores/api-tokens";

export const CreateAgentInputSchema = z.strictObject({
  name: AgentNameSchema,
  scopes: AgentScopesSchema,
  expires_at: z.date().nullable(),
});

/**
 * A new agent identity (spiffe://verity.local/agent/<name>) with its first
 * token. A name that already has tokens is refused: a second credential for
 * a running agent is a rotation (`tokens rotate`), which keeps the trail.
 */
export async function createAgent(
  db: Db,
  raw: z.input<typeof CreateAgentInputSchema>,
  actor: AuditActor,
): Promise<{ identity: string; token: string; view: ApiTokenView }> {
  const input = parseOrThrow(CreateAgentInputSchema, raw);
  if (input.expires_at && input.expires_at <= new Date()) {
    throw new AppError("validation_failed", "expires_at: must be in the future", {
      errors: [{ field: "expires_at", message: "must be in the future" }],
    });
  }
  const identity = agentIdentity(input.name);
  if ((await db.apiToken.count({ where: { identity } })) > 0) {
    throw new AppError(
      "validation_failed",
      `name: agent ${input.name} exists already; rotate its token (tokens rotate <id>) instead`,
      { errors: [{ field: "name", message: "exists already" }] },
    );
  }
  const { token, view } = await issueApiToken(
    db,
    { name: input.name, identity, scopes: input.scopes, expiresAt: input.expires_at },
    actor,
  );
  return { identity, token, view };
}
