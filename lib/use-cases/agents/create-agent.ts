import { z } from "zod";
import { listKnownToolNames } from "@/lib/use-cases/tools/get-tool";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { agentIdentity, AgentNameSchema, AgentScopesSchema, type AgentScopes } from "@/lib/model/agent-scopes";
import { listWorkflowNames } from "@/lib/stores/workflow-registry";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { issueFirstApiToken, type ApiTokenView } from "@/lib/stores/api-tokens";

export const CreateAgentInputSchema = z.strictObject({
  name: AgentNameSchema,
  scopes: AgentScopesSchema,
  expires_at: z.date().nullable(),
});

/** Who grants the token its scopes: whether they themselves may read restricted fields (data:restricted). */
export interface AgentGrantor {
  readsRestricted: boolean;
}

/**
 * A new agent identity (spiffe://verity.local/agent/<name>) with its first
 * token. A name that already has tokens is refused: a second credential for
 * a running agent is a rotation (`tokens rotate`), which keeps the trail.
 * The `read_restricted` scope is granted only by a person who holds
 * data:restricted: no one hands an agent a clearance they do not have
 * (without a grantor, nobody is assumed to have it).
 */
export async function createAgent(
  db: Db,
  raw: z.input<typeof CreateAgentInputSchema>,
  actor: AuditActor,
  grantor: AgentGrantor = { readsRestricted: false },
): Promise<{ identity: string; token: string; view: ApiTokenView }> {
  const input = parseOrThrow(CreateAgentInputSchema, raw);
  if (input.scopes.read_restricted && !grantor.readsRestricted)
    throw new AppError(
      "forbidden",
      "Only a person who may read restricted fields (data:restricted) may let an agent read them: the read_restricted scope was not granted, and no agent was created.",
      { scope: "read_restricted", permission: "data:restricted" },
    );
  if (input.expires_at && input.expires_at <= new Date()) {
    throw new AppError("validation_failed", "expires_at: must be in the future", {
      errors: [{ field: "expires_at", message: "must be in the future" }],
    });
  }
  const toolNames = await listKnownToolNames(db);
  requireRegisteredNames(input.scopes, await listWorkflowNames(db), toolNames);
  const identity = agentIdentity(input.name);
  const issued = await issueFirstApiToken(
    db,
    { name: input.name, identity, scopes: input.scopes, expiresAt: input.expires_at },
    actor,
  );
  if (!issued) {
    throw new AppError(
      "validation_failed",
      `name: agent ${input.name} exists already; rotate its token instead (Rotate on /admin/agents, or tokens rotate <id>)`,
      { errors: [{ field: "name", message: "exists already" }] },
    );
  }
  return { identity, token: issued.token, view: issued.view };
}

/**
 * A scope naming a workflow or tool this server does not have grants
 * nothing and hides a typo ("agent_task"): refused, naming the field.
 * "*" stays every name, present and future.
 */
function requireRegisteredNames(
  scopes: AgentScopes,
  workflowNames: readonly string[],
  toolNames: readonly string[],
): void {
  const errors = [
    ...unknownNames(scopes.workflows, workflowNames).map((name) => ({
      field: "scopes.workflows",
      message: `${name} is not a registered workflow (${workflowNames.join(", ")})`,
    })),
    ...unknownNames(scopes.tools, toolNames).map((name) => ({
      field: "scopes.tools",
      message: `${name} is not a registered tool (${toolNames.join(", ")})`,
    })),
  ];
  if (errors.length > 0)
    throw new AppError("validation_failed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
}

function unknownNames(list: AgentScopes["workflows"], known: readonly string[]): string[] {
  return list === "*" ? [] : list.filter((name) => !known.includes(name));
}
