import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { builtInToolDefinitions } from "@/lib/model/tools/built-in-tools";
import { validateToolDefinition } from "@/lib/model/tools/validate-tool-definition";
import { insertToolVersion } from "@/lib/stores/tool-registry";

/** Who registers the shipped tools at start. */
export const builtInRegistrar: Actor = { identity: "spiffe://verity.local/system/start", kind: "system" };

/**
 * The shipped tools as the first registered ones (`payments.refund@1`,
 * `crm.add_note@1`), at every start: an unchanged definition is found
 * already registered and nothing is written, so a start killed half-way is
 * completed by the next. A built-in definition that no longer passes the
 * validator, or that differs from what an earlier start registered under
 * the same version, stops the start: the calls recorded under that version
 * would otherwise be judged by other rules than they were made under.
 */
export async function registerBuiltInTools(db: Db): Promise<string[]> {
  const registered: string[] = [];
  for (const def of Object.values(builtInToolDefinitions)) {
    const validation = validateToolDefinition(def, { builtIn: true, toolExists: () => true });
    if (!validation.ok)
      throw new Error(
        `built-in tool ${def.name} is invalid: ${validation.problems.map((p) => `${p.path} ${p.message}`).join("; ")}`,
      );
    const outcome = await db.$transaction((tx) =>
      insertToolVersion(tx, def, { builtIn: true, actor: builtInRegistrar }),
    );
    if (outcome.kind === "registered") registered.push(outcome.version.id);
  }
  return registered;
}
