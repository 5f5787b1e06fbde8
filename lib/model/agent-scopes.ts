import { z } from "zod";
import { AppError } from "@/lib/core/errors";

/**
 * What an agent's token may do beyond its role: which workflows it may
 * create and drive tasks of, which tools it may record intents for, and
 * whether it may take over another agent's live lease. Stored as
 * `api_tokens.scopes`; "*" is every name, present and future.
 */
const scopeNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, . _ - only");

const nameListSchema = z.union([z.literal("*"), z.array(scopeNameSchema).max(100)]);

export const AgentScopesSchema = z.strictObject({
  workflows: nameListSchema,
  tools: nameListSchema,
  take_over_leases: z.boolean(),
  /**
   * The registries this token may publish to (a team's CI publishing its
   * workflow definitions and tools). Absent on tokens issued before it
   * existed, which is none.
   */
  publish: z
    .array(z.enum(["workflows", "tools"]))
    .max(2)
    .optional(),
  /**
   * See restricted fields (lib/model/data-classes.ts) unmasked: a worker that
   * must re-send a held call's exact request. Absent is false; an agent's
   * role never grants it (lib/model/permissions.ts mayReadRestricted).
   */
  read_restricted: z.boolean().optional(),
});
export type AgentScopes = z.infer<typeof AgentScopesSchema>;

/** The column's default: every workflow and tool, no take-over. */
export const defaultAgentScopes: AgentScopes = { workflows: "*", tools: "*", take_over_leases: false };

function includes(list: AgentScopes["workflows"], name: string): boolean {
  return list === "*" || list.includes(name);
}

/** Whether the token may create tasks of this workflow and drive them (transitions, leases, intents, instructions). */
export function mayUseWorkflow(scopes: AgentScopes, workflow: string): boolean {
  return includes(scopes.workflows, workflow);
}

/** Whether the token may record an intent to call this tool. */
export function mayCallTool(scopes: AgentScopes, tool: string): boolean {
  return includes(scopes.tools, tool);
}

/** Whether the token may publish workflow definitions or register tools. */
export function mayPublishTo(scopes: AgentScopes, registry: "workflows" | "tools"): boolean {
  return scopes.publish?.includes(registry) ?? false;
}

/** Whether the token may take a live lease away from another identity. */
export function mayTakeOverLeases(scopes: AgentScopes): boolean {
  return scopes.take_over_leases;
}

/** 403 naming the scope when the principal's token does not cover the workflow; people carry no scopes. */
export function requireWorkflowInScope(scopes: AgentScopes | undefined, workflow: string): void {
  if (scopes && !mayUseWorkflow(scopes, workflow)) {
    throw new AppError("forbidden", `This token's scopes do not include the workflow ${workflow}.`, {
      scope: "workflows",
      workflow,
    });
  }
}

/** 403 naming the scope when the principal's token does not cover the tool. */
export function requireToolInScope(scopes: AgentScopes | undefined, tool: string): void {
  if (scopes && !mayCallTool(scopes, tool)) {
    throw new AppError("forbidden", `This token's scopes do not include the tool ${tool}.`, { scope: "tools", tool });
  }
}

/** An agent's name: the last segment of its SPIFFE ID. */
export const AgentNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, . _ - only, starting with a letter or digit");

/** The SPIFFE ID an agent acts under: `updated_by` of every change it makes. */
export function agentIdentity(name: string): string {
  return `spiffe://verity.local/agent/${name}`;
}
