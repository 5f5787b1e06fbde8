import { z } from "zod";
import { AppError } from "@/lib/core/errors";
import { recordPermissionDenied } from "@/lib/adapters/auth/audit-trail";
import type { Db } from "@/lib/db/client";
import type { EffectLookup as LookupRow, Execution } from "@/lib/generated/prisma/client";
import { requireRegistryAuthority, type Principal } from "@/lib/model/permissions";
import type { ToolVersionView } from "@/lib/stores/tool-registry";
import type { ToolSummary } from "@/lib/use-cases/tools/get-tool";

/**
 * The wire shape of the tool registry. `definition` is exactly what
 * POST /api/v1/tools accepts (docs/tools.md), so a tool can be fetched,
 * edited (with a higher version) and registered again; the registry's own
 * facts are beside it, never inside it.
 */
const JsonObject = z.record(z.string(), z.unknown());

export const ToolDefinitionDocumentSchema = z
  .object({
    name: z.string().meta({ description: "Lower-case letters, digits, . _ -: the name agent token scopes use." }),
    version: z.int().min(1),
    description: z.string(),
    irreversible: z
      .boolean()
      .meta({ description: "The server's fact: an irreversible call is held to every rule of unknown outcomes." }),
    request_schema: JsonObject.meta({ description: "JSON Schema (draft-07, Ajv strict) of the request; type object." }),
    topic: z.string().meta({ description: "The instruction-ledger topic that governs the tool." }),
    idempotency_window_seconds: z.int().min(60),
    amount: z.object({ amount_pointer: z.string(), currency_pointer: z.string() }).optional().meta({
      description:
        "JSON pointers to the request's amount (integer minor units) and currency, both required by the schema: four eyes reads them.",
    }),
    identity_fields: z
      .array(z.string())
      .meta({ description: "JSON pointers of the request fields the provider's record must repeat." }),
    max_attempts: z.int().min(1).max(10),
    compensating_tool: z.string().optional(),
    compensation_request: z.record(z.string(), z.string()).optional(),
    reconciliation: JsonObject.meta({
      description:
        '{"method":"http","url":…} | {"method":"worker","deadline_seconds":…} | {"method":"manual"}; the built-ins use {"method":"connector"}.',
    }),
  })
  .meta({ description: "A tool definition (lib/model/tools/tool-definition.ts)." });

export const ToolVersionResourceSchema = z.object({
  definition: ToolDefinitionDocumentSchema,
  name: z.string(),
  version: z.int(),
  digest: z.string().meta({ description: "sha256 of the definition's canonical JSON." }),
  built_in: z.boolean(),
  registered_by: z.string(),
  registered_at: z.iso.datetime(),
  retired_at: z.iso.datetime().nullable(),
  retired_by: z.string().nullable(),
});
export type ToolVersionResource = z.infer<typeof ToolVersionResourceSchema>;

export const ToolListSchema = z.object({
  items: z.array(z.object({ name: z.string(), retired: z.boolean(), newest: ToolVersionResourceSchema })),
});

export const ToolDetailSchema = z.object({
  name: z.string(),
  retired: z.boolean(),
  newest: ToolVersionResourceSchema,
  versions: z.array(ToolVersionResourceSchema).meta({ description: "Every version, newest first." }),
});

export function toolVersionResource(v: ToolVersionView): ToolVersionResource {
  return {
    definition: v.definition as z.infer<typeof ToolDefinitionDocumentSchema>,
    name: v.name,
    version: v.version,
    digest: v.digest,
    built_in: v.builtIn,
    registered_by: v.registeredBy,
    registered_at: v.registeredAt.toISOString(),
    retired_at: v.retiredAt?.toISOString() ?? null,
    retired_by: v.retiredBy,
  };
}

export function toolListResource(tools: ToolSummary[]): z.infer<typeof ToolListSchema> {
  return { items: tools.map((t) => ({ name: t.name, retired: t.retired, newest: toolVersionResource(t.newest) })) };
}

export function toolDetailResource(t: ToolSummary & { versions: ToolVersionView[] }): z.infer<typeof ToolDetailSchema> {
  return {
    name: t.name,
    retired: t.retired,
    newest: toolVersionResource(t.newest),
    versions: t.versions.map(toolVersionResource),
  };
}

/** Registering or retiring: an admin, or an agent token with the publish scope for tools; a refusal is audited like any denied permission. */
export async function requireToolRegistrarRecorded(db: Db, principal: Principal, where: string): Promise<Principal> {
  try {
    return requireRegistryAuthority(principal, "tools");
  } catch (error) {
    if (error instanceof AppError && error.code === "forbidden")
      await recordPermissionDenied(db, principal, "tools:register", where);
    throw error;
  }
}

export const LookupResourceSchema = z.object({
  id: z.string(),
  tool: z.string(),
  tool_version: z.int().nullable(),
  idempotency_key: z.string().meta({ description: "Look the effect up under this key at the provider." }),
  execution_id: z.string(),
  task_id: z.string(),
  request: JsonObject.meta({ description: "The call's request, as recorded with its intent." }),
  status: z.enum(["QUEUED", "CLAIMED", "ANSWERED", "EXPIRED"]),
  fencing_token: z.int().meta({ description: "Send it with the answer: an answer under an older claim is refused." }),
  claimed_by: z.string().nullable(),
  lease_expires_at: z.iso.datetime().nullable(),
  deadline_at: z.iso.datetime().meta({ description: "Unanswered by then, the execution goes to the review queue." }),
  answer: JsonObject.nullable(),
});

export function lookupResource(
  lookup: LookupRow,
  execution: Pick<Execution, "taskId" | "request" | "toolVersion">,
): z.infer<typeof LookupResourceSchema> {
  return {
    id: lookup.id,
    tool: lookup.tool,
    tool_version: execution.toolVersion,
    idempotency_key: lookup.idempotencyKey,
    execution_id: lookup.executionId,
    task_id: execution.taskId,
    request: execution.request as Record<string, unknown>,
    status: lookup.status,
    fencing_token: lookup.fencingToken,
    claimed_by: lookup.claimedBy,
    lease_expires_at: lookup.leaseExpiresAt?.toISOString() ?? null,
    deadline_at: lookup.deadlineAt.toISOString(),
    answer: (lookup.answer as Record<string, unknown> | null) ?? null,
  };
}
