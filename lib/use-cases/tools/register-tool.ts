import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Actor } from "@/lib/model/actor";
import { isBuiltInTool } from "@/lib/model/tools/built-in-tools";
import { validateToolDefinition, type ToolProblem } from "@/lib/model/tools/validate-tool-definition";
import {
  getNewestToolVersion,
  getToolVersion,
  insertToolVersion,
  listToolNames,
  type RegisterOutcome,
} from "@/lib/stores/tool-registry";

/**
 * Registers a tool, or a new version of one (`POST /api/v1/tools`). The
 * caller's authority (an admin, or an agent token with the `publish` scope
 * for tools) is checked by the adapter. A definition with problems is 422
 * with every problem at its JSON path; a version that exists with the same
 * content is answered as already registered; with other content, 409. A new
 * version must be newer than every existing one, so "the newest version" —
 * the one new intents are recorded under — is the last one registered.
 */
export async function registerTool(db: Db, doc: unknown, actor: Actor): Promise<RegisterOutcome> {
  const names = new Set(await listToolNames(db));
  const validation = validateToolDefinition(doc, { toolExists: (name) => names.has(name) || isBuiltInTool(name) });
  if (!validation.ok) throw definitionProblems(validation.problems);
  const def = validation.definition;
  if (isBuiltInTool(def.name))
    throw definitionProblems([
      { path: "$.name", message: `${def.name} is built into Verity; register your tool under a name of its own.` },
    ]);
  const existing = await getToolVersion(db, def.name, def.version);
  if (!existing) {
    const newest = await getNewestToolVersion(db, def.name);
    if (newest && newest.version > def.version)
      throw definitionProblems([
        {
          path: "$.version",
          message: `${def.name} is at version ${newest.version}; a new version must be greater (register ${newest.version + 1}).`,
        },
      ]);
  }
  return db.$transaction((tx) => insertToolVersion(tx, def, { builtIn: false, actor }));
}

function definitionProblems(problems: ToolProblem[]): AppError {
  return new AppError(
    "definition_invalid",
    `The tool definition has ${problems.length} problem${problems.length === 1 ? "" : "s"}: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`.slice(
      0,
      2000,
    ),
    {
      problems,
      errors: problems.map((p) => ({ field: p.path, message: p.message })),
    },
  );
}
