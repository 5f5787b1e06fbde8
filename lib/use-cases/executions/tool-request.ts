import type { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { tools } from "@/lib/model/executions/tools";
import { builtInDefinitionOf, BUILT_IN_TOOL_VERSION } from "@/lib/model/tools/built-in-tools";
import { requestProblems } from "@/lib/model/tools/request-schema";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { getNewestToolVersion } from "@/lib/stores/tool-registry";

/**
 * The version a new intent is recorded under: a built-in's, or the newest
 * registered one. A tool nobody registered is a 400 on `tool`; a retired
 * one takes no new intents (422 naming it); calls already recorded under
 * it are not affected (they keep their version: toolVersionOf).
 */
export async function toolForNewIntent(db: Db, name: string): Promise<ToolDefinition> {
  const builtIn = builtInDefinitionOf(name, BUILT_IN_TOOL_VERSION);
  if (builtIn) return builtIn;
  const newest = await getNewestToolVersion(db, name);
  if (!newest)
    throw new AppError("validation_failed", `tool: ${name} is not a registered tool.`, {
      errors: [{ field: "tool", message: `${name} is not a registered tool` }],
    });
  if (newest.retiredAt)
    throw new AppError(
      "invariant_violated",
      `Tool ${name} was retired on ${newest.retiredAt.toISOString()} by ${newest.retiredBy ?? "someone"}: it takes no new intents. Calls already recorded under it settle as before.`,
      { violations: [{ invariant: "tool_not_retired", message: `${name} is retired` }], tool: name },
    );
  return newest.definition;
}

/**
 * The request against the tool version's schema: a built-in's zod schema
 * (which its connector parses with), a registered tool's JSON Schema (Ajv).
 * Either way a 400 naming each field as `request.<field>`.
 */
export function parseToolRequest(tool: ToolDefinition, request: Record<string, unknown>): Record<string, unknown> {
  const builtIn = builtInDefinitionOf(tool.name, tool.version);
  if (builtIn) return parseBuiltInRequest(tools[tool.name as keyof typeof tools].request, request);
  const problems = requestProblems(tool.request_schema, request);
  if (problems.length === 0) return request;
  const errors = problems.map((p) => ({ field: p.field ? `request.${p.field}` : "request", message: p.message }));
  throw new AppError("validation_failed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
}

function parseBuiltInRequest<S extends z.ZodType>(schema: S, request: unknown): z.infer<S> {
  try {
    return parseOrThrow(schema, request);
  } catch (error) {
    if (error instanceof AppError && error.details.errors) {
      const errors = error.details.errors.map((e) => ({
        field: e.field ? `request.${e.field}` : "request",
        message: e.message,
      }));
      throw new AppError("validation_failed", errors.map((e) => `${e.field}: ${e.message}`).join("; "), { errors });
    }
    throw error;
  }
}
