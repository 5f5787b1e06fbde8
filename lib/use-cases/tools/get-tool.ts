import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { toolNames as builtInToolNames } from "@/lib/model/executions/tools";
import {
  listNewestToolVersions,
  listToolNames,
  listToolVersions,
  type ToolVersionView,
} from "@/lib/stores/tool-registry";

/**
 * Every tool name an agent's scope, a filter or a search may name: the
 * built-ins and every registered tool, retired ones too (a scope names what
 * a token may call, and a retired tool refuses on its own; its calls stay
 * searchable).
 */
export async function listKnownToolNames(db: Db): Promise<string[]> {
  return [...new Set([...builtInToolNames, ...(await listToolNames(db))])];
}

export interface ToolSummary {
  name: string;
  newest: ToolVersionView;
  /** Every version of the tool is retired: it takes no new intents. */
  retired: boolean;
}

/** Every registered tool with its newest version. */
export async function listTools(db: Db): Promise<ToolSummary[]> {
  const newest = await listNewestToolVersions(db);
  return newest.map((v) => ({ name: v.name, newest: v, retired: v.retiredAt !== null }));
}

/** One tool and all its versions, newest first. */
export async function getToolOrThrow(db: Db, name: string): Promise<ToolSummary & { versions: ToolVersionView[] }> {
  const versions = await listToolVersions(db, name);
  const [newest] = versions;
  if (!newest) throw new AppError("not_found", `Tool ${name} is not registered.`);
  return { name, newest, retired: newest.retiredAt !== null, versions };
}
