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
 *
 * Keyed by tenant as well as name and version: each tenant has its own
 * registry (tool_versions is under row-level security), so two tenants'
 * `foo@1` are two different definitions, and one process serves both.
 */
const remembered = new Map<string, ToolDefinition>();

/** The tenant, name and version of a call or a registry row; the tenant first, as the key's scope. */
function keyOf(tenantId: string, name: string, version: number): string {
  return `${tenantId}\u0000${toolVersionId(name, version)}`;
}

export function rememberToolVersion(tenantId: string, def: ToolDefinition): void {
  remembered.set(keyOf(tenantId, def.name, def.version), def);
}

/**
 * The definition the tenant's execution was recorded under, if this process
 * knows it: built in (the same for every tenant), or read from that
 * tenant's registry.
 */
export function knownToolVersion(
  tenantId: string,
  name: string,
  version: number | null | undefined,
): ToolDefinition | null {
  const builtIn = builtInDefinitionOf(name, version ?? null);
  if (builtIn) return builtIn;
  return version === null || version === undefined ? null : (remembered.get(keyOf(tenantId, name, version)) ?? null);
}
