import { z } from "zod";
import { builtInToolDefinitions } from "@/lib/model/tools/built-in-tools";
import { knownToolVersion } from "@/lib/model/tools/known-tool-versions";

/**
 * The external tools Verity knows, as data. Whether a tool is irreversible
 * is the server's fact, not something a caller declares: an agent cannot
 * talk its way around the unknown-outcome rule by calling a refund
 * "reversible".
 */
export const RefundRequestSchema = z.strictObject({
  amount_cents: z.number().int().min(1).max(100_000_000),
  currency: z.string().regex(/^[a-z]{3}$/, "must be a lower-case ISO 4217 code, e.g. usd"),
  charge_id: z.string().min(1).max(128),
  customer_id: z.string().min(1).max(128),
});

export const CrmNoteRequestSchema = z.strictObject({
  customer_id: z.string().min(1).max(128),
  text: z.string().min(1).max(2000),
});

/**
 * `topic`: the instruction-ledger topic that governs the tool
 * (lib/stores/instructions.ts). An irreversible call is held to the task's
 * current authorized instruction on it: a "forbid" there, or a call relying
 * on an instruction that is no longer current, is frozen for review.
 *
 * `maxAttempts`: how many attempts (all under the call's one idempotency
 * key) an agent makes of a call whose effect the provider confirms never
 * happened, before a person decides (execution-rules.ts retryAdviceOf).
 * Two, so a lone refusal is retried once and a refusal that persists is
 * seen by someone rather than retried forever.
 */
export const tools = {
  "payments.refund": {
    irreversible: true,
    request: RefundRequestSchema,
    description: builtInToolDefinitions["payments.refund"].description,
    topic: builtInToolDefinitions["payments.refund"].topic,
    maxAttempts: builtInToolDefinitions["payments.refund"].max_attempts,
  },
  "crm.add_note": {
    irreversible: false,
    request: CrmNoteRequestSchema,
    description: builtInToolDefinitions["crm.add_note"].description,
    topic: builtInToolDefinitions["crm.add_note"].topic,
    maxAttempts: builtInToolDefinitions["crm.add_note"].max_attempts,
  },
} as const;

export type ToolName = keyof typeof tools;
export const toolNames = Object.keys(tools) as [ToolName, ...ToolName[]];
export const ToolNameSchema = z.enum(toolNames);

/**
 * The tool's attempt limit: the version the call was recorded under (a
 * built-in, or a version of the tenant's registry this process has read:
 * lib/model/tools/known-tool-versions.ts); 1 for a tool this server does
 * not know (no retry is advised for it).
 */
export function maxAttemptsOf(tenantId: string, tool: string, version?: number | null): number {
  return knownToolVersion(tenantId, tool, version)?.max_attempts ?? 1;
}
