import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { isBuiltInTool } from "@/lib/model/tools/built-in-tools";
import { listToolVersions, retireToolVersions, type ToolVersionView } from "@/lib/stores/tool-registry";

export const RetireToolInputSchema = z.strictObject({
  reason: z.string().trim().min(1, "a reason is required").max(2000),
});

/**
 * Retires a tool: every version stops taking new intents (recordIntent
 * answers 422 `tool_not_retired`), while calls already recorded under it
 * settle as before — reconciled, reviewed, corrected by the same rules.
 * Retiring a retired tool changes nothing. The built-in tools are part of
 * Verity's own workflows and are not retired this way.
 */
export async function retireTool(db: Db, name: string, raw: unknown, actor: Actor): Promise<ToolVersionView[]> {
  const input = parseOrThrow(RetireToolInputSchema, raw);
  if (isBuiltInTool(name))
    throw new AppError("invariant_violated", `${name} is built into Verity and cannot be retired.`, {
      violations: [{ invariant: "built_in_tool_kept", message: `${name} is built in` }],
    });
  const versions = await listToolVersions(db, name);
  if (versions.length === 0) throw new AppError("not_found", `Tool ${name} is not registered.`);
  await db.$transaction((tx) => retireToolVersions(tx, name, actor, input.reason));
  return listToolVersions(db, name);
}
