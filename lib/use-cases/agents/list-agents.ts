import type { Db } from "@/lib/db/client";
import type { Role } from "@/lib/model/permissions";
import { listApiTokens, listTokenIdentities, type ApiTokenView } from "@/lib/stores/api-tokens";

/** Whether a token still opens the API; a revoked one says so even after its expiry passed. */
export type AgentTokenState = "live" | "expired" | "revoked";

export function tokenStateOf(token: Pick<ApiTokenView, "revokedAt" | "expiresAt">, now: Date): AgentTokenState {
  if (token.revokedAt) return "revoked";
  if (token.expiresAt && token.expiresAt <= now) return "expired";
  return "live";
}

export interface AgentTokenSummary extends ApiTokenView {
  state: AgentTokenState;
}

export interface AgentSummary {
  identity: string;
  /** The name its first token was issued under. */
  name: string;
  /** The role of its newest token (the demo's observer-bot is an auditor). */
  role: Role;
  /** Newest first, revoked and expired ones included, so the list says why a token stopped working. */
  tokens: AgentTokenSummary[];
  liveTokens: number;
}

/**
 * Every agent identity with its tokens, never a secret: the console's
 * /admin/agents and the CLI's `agents list`. An identity's tokens are read
 * one identity at a time through the store's own list; an installation has
 * tens of agents, not thousands.
 */
export async function listAgents(db: Db, now = new Date()): Promise<AgentSummary[]> {
  const identities = await listTokenIdentities(db);
  return Promise.all(
    identities.map(async ({ identity, name }) => {
      const tokens = (await listApiTokens(db, identity)).map((t) => ({ ...t, state: tokenStateOf(t, now) }));
      return {
        identity,
        name,
        role: tokens[0]?.role ?? "agent",
        tokens,
        liveTokens: tokens.filter((t) => t.state === "live").length,
      };
    }),
  );
}
