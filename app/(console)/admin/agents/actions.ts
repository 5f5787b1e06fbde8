"use server";

import { z } from "zod";
import type { FormAction, FormActionSpec } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import {
  rotationOverlaps,
  tokenLifetimes,
  type AgentsFormState,
  type ShownOnceToken,
} from "@/lib/adapters/console/agents/agents-form";
import { formatDateTime } from "@/lib/adapters/console/shared/format";
import type { AppError } from "@/lib/core/errors";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import { mayReadRestricted } from "@/lib/model/permissions";
import type { ApiTokenView } from "@/lib/stores/api-tokens";
import { createAgent } from "@/lib/use-cases/agents/create-agent";
import { revokeAgentToken } from "@/lib/use-cases/agents/revoke-agent-token";
import { rotateAgentToken } from "@/lib/use-cases/agents/rotate-agent-token";
import { consoleDb } from "@/lib/adapters/auth/session";

/**
 * The agents page's writes. Each checks agents:manage itself (the page
 * showing a form proves nothing about who submits it); the use cases judge
 * the fields and the store records the audit entry (issued, revoked,
 * rotated) in the same transaction. A new token's secret is in the answer
 * and nowhere else.
 */

const agentsForm = {
  permission: "agents:manage",
  errorState: (message: string): AgentsFormState => ({ status: "error", message }),
  // A rotation refused because the token is no longer live means someone revoked it, or it ran out, first.
  answer: (error: AppError) =>
    error.code === "invariant_violated" ? { status: "conflict", message: error.message } : undefined,
  refreshAfter: (error: AppError) => error.code === "invariant_violated",
} satisfies Partial<FormActionSpec<z.ZodType, AgentsFormState>>;

function shownOnce(secret: string, view: ApiTokenView): ShownOnceToken {
  return { secret, id: view.id, identity: view.identity, expiresAt: view.expiresAt?.toISOString() ?? null };
}

const lifetimeValues = tokenLifetimes.map((l) => l.value) as [string, ...string[]];

// Checkboxes arrive as `workflow:<name>=on` and `tool:<name>=on`: the action parses
// Object.fromEntries(formData), which keeps one value per name.
const CreateAgentFormSchema = z.looseObject({
  name: z.string().default(""),
  allWorkflows: z.string().optional(),
  allTools: z.string().optional(),
  takeOver: z.string().optional(),
  readRestricted: z.string().optional(),
  publishWorkflows: z.string().optional(),
  publishTools: z.string().optional(),
  expiresIn: z.enum(lifetimeValues, "Choose how long the token lives."),
});

function checkedNames(form: Record<string, unknown>, prefix: string): string[] {
  return Object.keys(form)
    .filter((key) => key.startsWith(prefix) && form[key] === "on")
    .map((key) => key.slice(prefix.length));
}

export const createAgentAction: FormAction<AgentsFormState> = sessionFormAction({
  ...agentsForm,
  name: "createAgentAction",
  schema: CreateAgentFormSchema,
  async run(form, { actor, principal }) {
    const workflows: AgentScopes["workflows"] = form.allWorkflows === "on" ? "*" : checkedNames(form, "workflow:");
    if (workflows.length === 0)
      return {
        status: "error",
        message: "Choose the workflows this agent may create and drive (at least one, or every workflow).",
      };
    const tools: AgentScopes["tools"] = form.allTools === "on" ? "*" : checkedNames(form, "tool:");
    // A team's CI publishing its definitions: the registries this token may write to (requireRegistryAuthority).
    const publish = (["workflows", "tools"] as const).filter(
      (registry) => form[registry === "workflows" ? "publishWorkflows" : "publishTools"] === "on",
    );
    const seconds = tokenLifetimes.find((l) => l.value === form.expiresIn)?.seconds ?? null;
    const { identity, token, view } = await createAgent(
      await consoleDb(),
      {
        name: form.name.trim(),
        scopes: {
          workflows,
          tools,
          take_over_leases: form.takeOver === "on",
          ...(publish.length > 0 ? { publish } : {}),
          ...(form.readRestricted === "on" ? { read_restricted: true } : {}),
        },
        expires_at: seconds === null ? null : new Date(Date.now() + seconds * 1000),
      },
      actor,
      // The person submitting, judged on the server: the form showing the box proves nothing.
      { readsRestricted: mayReadRestricted(principal) },
    );
    return {
      status: "done",
      message: `${identity} is created. Its token is shown only now: copy it into the agent's configuration. Verity keeps only its hash.`,
      token: shownOnce(token, view),
    };
  },
});

const TokenFormSchema = z.object({ tokenId: z.string().min(1) });

export const revokeTokenAction: FormAction<AgentsFormState> = sessionFormAction({
  ...agentsForm,
  name: "revokeTokenAction",
  schema: TokenFormSchema,
  async run({ tokenId }, { actor }) {
    const { token, alreadyRevoked } = await revokeAgentToken(await consoleDb(), { token_id: tokenId }, actor);
    const revokedAt = token.revokedAt ? formatDateTime(token.revokedAt) : "";
    if (alreadyRevoked)
      return { status: "conflict", message: `Token ${token.prefix}… was already revoked, at ${revokedAt}.` };
    return {
      status: "done",
      message: `Token ${token.prefix}… is revoked (${revokedAt}): the agent's next request with it is refused.`,
    };
  },
});

const overlapValues = rotationOverlaps.map((o) => o.value) as [string, ...string[]];

export const rotateTokenAction: FormAction<AgentsFormState> = sessionFormAction({
  ...agentsForm,
  name: "rotateTokenAction",
  schema: TokenFormSchema.extend({ overlap: z.enum(overlapValues, "Choose how long the old token keeps working.") }),
  async run({ tokenId, overlap }, { actor }) {
    const { token, view, previous } = await rotateAgentToken(
      await consoleDb(),
      { token_id: tokenId, overlap_seconds: Number(overlap) },
      actor,
    );
    const until = previous.expiresAt ? formatDateTime(previous.expiresAt) : "now";
    return {
      status: "done",
      message: `New token for ${view.identity}, shown only now. The old token ${previous.prefix}… keeps working until ${until}, then stops.`,
      token: shownOnce(token, view),
    };
  },
});
