import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { valueAtPointer } from "@/lib/model/tools/json-pointer";

/**
 * The request a person's compensation sends to the compensating tool, built
 * from the effect it undoes by the tool's `compensation_request` (each field
 * a pointer into `{ request, result }`); without one, the effect's own
 * request. A pointer that finds nothing (the provider's result lacks the
 * field) is a problem named in words: nothing is sent on a guess.
 */
export type CompensationRequest =
  { ok: true; request: Record<string, unknown> } | { ok: false; missing: Array<{ field: string; pointer: string }> };

export function compensationRequestOf(
  tool: ToolDefinition,
  effect: { request: Record<string, unknown>; result: unknown },
): CompensationRequest {
  if (!tool.compensation_request) return { ok: true, request: { ...effect.request } };
  const source = { request: effect.request, result: effect.result };
  const request: Record<string, unknown> = {};
  const missing: Array<{ field: string; pointer: string }> = [];
  for (const [field, pointer] of Object.entries(tool.compensation_request)) {
    const value = valueAtPointer(source, pointer);
    if (value === undefined || value === null) missing.push({ field, pointer });
    else request[field] = value;
  }
  return missing.length === 0 ? { ok: true, request } : { ok: false, missing };
}
