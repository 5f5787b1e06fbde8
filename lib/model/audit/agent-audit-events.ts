import type { AuditActor, AuditEntryInput } from "@/lib/model/audit/audit-chain";

/**
 * What agents' credentials and task delegations record, as pure builders
 * (the pattern of audit-events.ts). Never a token or its hash: its id,
 * prefix, identity, scopes and expiry say which credential it was.
 */

interface TokenFacts {
  id: string;
  name: string;
  identity: string;
  tokenPrefix: string;
  scopes: unknown;
  expiresAt: Date | null;
}

export function tokenAuditEntry(
  action: "agent.token_issued" | "agent.token_revoked" | "agent.token_rotated",
  token: TokenFacts,
  actor: AuditActor,
  details: Record<string, unknown> = {},
): AuditEntryInput {
  return {
    action,
    actor,
    subject: { type: "api_token", id: token.id },
    details: {
      name: token.name,
      identity: token.identity,
      prefix: token.tokenPrefix,
      scopes: token.scopes,
      expires_at: token.expiresAt?.toISOString() ?? null,
      ...details,
    },
  };
}

export function delegationAuditEntry(
  action: "task.delegated" | "task.undelegated",
  delegation: { id: string; taskId: string; identity: string },
  actor: AuditActor,
): AuditEntryInput {
  return {
    action,
    actor,
    subject: { type: "task_delegation", id: delegation.id },
    taskId: delegation.taskId,
    details: { delegation_id: delegation.id, identity: delegation.identity },
  };
}
