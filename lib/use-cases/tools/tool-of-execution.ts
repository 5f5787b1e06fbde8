import type { Db, Tx } from "@/lib/db/client";
import type { Execution } from "@/lib/generated/prisma/client";
import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import { toolDefinitionOf } from "@/lib/stores/tool-registry";

/**
 * The tool version a call was recorded under (executions.tool_version):
 * everything about the call afterwards — its schema, irreversibility,
 * reconciliation, attempt limit, identity fields, window — comes from that
 * version, never from a newer one. Reading it here also makes it known to
 * the pure rules (lib/model/tools/known-tool-versions.ts).
 */
export async function toolOfExecutionOrThrow(
  db: Db | Tx,
  execution: Pick<Execution, "id" | "tool" | "toolVersion">,
): Promise<ToolDefinition> {
  const def = await toolDefinitionOf(db, execution.tool, execution.toolVersion);
  if (!def)
    throw new Error(
      `execution ${execution.id}: tool ${execution.tool}@${execution.toolVersion ?? "?"} is not registered here`,
    );
  return def;
}
