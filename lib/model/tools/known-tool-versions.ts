import { builtInDefinitionOf } from "@/lib/model/tools/built-in-tools";
import { toolVersionId, type ToolDefinition } from "@/lib/model/tools/tool-definition";

/**
 * The tool versions this process has read from the registry, for the few
 * pure rules that need a call's tool without a database at hand (its
 * attempt limit, the fields its provider's record must repeat, its
 * idempotency window). A registered version is immutable (only its
 * retirement changes, which is not kept here), so a remembered definition
 * can never be stale. The registry store (lib/stores/tool-registry.ts)
 * remembers every version it reads or writes, and every engine entry point
 * that handles an execution reads its tool there first
 * (lib/use-cases/tools/tool-of-execution.ts).
 */
const remembered = new Map<string, ToolDefinition>();

export function rememberToolVersion(def: ToolDefinition): void {
  remembered.set(toolVersionId(def.name, def.version), def);
}

/** The definition an execution was recorded under, if this process knows it: built in, or read from the registry. */
export function knownToolVersion(name: string, version: number | null | undefined): ToolDefinition | null {
  const builtIn = builtInDefinitionOf(name, version ?? null);
  if (builtIn) return builtIn;
  return version === null || version === undefined ? null : (remembered.get(toolVersionId(name, version)) ?? null);
}
