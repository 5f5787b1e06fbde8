/**
 * `npm run -s verity -- workflows …`: the workflow registry from a shell, for
 * a team's CI publishing its definitions. Recorded in the audit log as
 * `system:cli`.
 *
 *   workflows publish <file.json> [--json]   a definition, exactly as GET /api/v1/workflows/{name} returns it under `definition`
 *   workflows list [--json]                  every version: digest, who published it, when, its tasks
 *   workflows get <name> [--version N]       one version's definition as JSON, ready to edit and publish again
 *
 * An invalid definition prints every problem on its own line, at its JSON
 * path, and exits 1; a published version with other content exits 1 naming
 * the digest it holds; publishing the same content again is a replay (exit 0).
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { isAppError } from "@/lib/core/errors";
import { getWorkflow } from "@/lib/use-cases/workflows/get-workflow";
import { listWorkflowVersions } from "@/lib/use-cases/workflows/list-workflow-versions";
import { publishWorkflow } from "@/lib/use-cases/workflows/publish-workflow";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = `usage: npm run -s verity -- workflows <command>
  publish <file.json> [--json]
  list [--json]
  get <name> [--version N]`;

export async function runWorkflowsCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { version: { type: "string" }, json: { type: "boolean", default: false } },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  try {
    switch (command) {
      case "publish": {
        const file = requireArg(rest[0], "<file.json>");
        const document = await readDocument(file);
        if (document === undefined) return 1;
        return await withCliDatabase(async ({ db }) => {
          try {
            const { kind, version } = await publishWorkflow(db, document, cliActor);
            if (values.json)
              console.log(
                JSON.stringify({ outcome: kind, name: version.name, version: version.version, digest: version.digest }),
              );
            else
              console.log(
                `${kind === "published" ? "published" : "already published (same content)"} ${version.name} v${version.version} ${version.digest}`,
              );
            return 0;
          } catch (error) {
            if (!isAppError(error) || error.code !== "definition_invalid") throw error;
            const problems = (error.details.problems ?? []) as Array<{ path: string; message: string }>;
            console.error(`verity: ${file} is not a valid workflow definition (${problems.length} problem(s)):`);
            for (const p of problems) console.error(`  ${p.path}: ${p.message}`);
            return 1;
          }
        });
      }
      case "list":
        return await withCliDatabase(async ({ db }) => {
          const versions = await listWorkflowVersions(db);
          if (values.json)
            console.log(
              JSON.stringify(
                versions.map((v) => ({
                  name: v.name,
                  version: v.version,
                  digest: v.digest,
                  built_in: v.builtIn,
                  published_by: v.publishedBy,
                  published_at: v.publishedAt.toISOString(),
                  tasks: v.tasks,
                })),
              ),
            );
          else
            for (const v of versions)
              console.log(
                `${`${v.name} v${v.version}`.padEnd(28)} ${v.digest}  ${v.builtIn ? "shipped" : `published by ${v.publishedBy}`} ${v.publishedAt.toISOString()}  ${v.tasks} task(s)`,
              );
          return 0;
        });
      case "get": {
        const name = requireArg(rest[0], "<name>");
        const version = values.version === undefined ? undefined : versionArg(values.version);
        return await withCliDatabase(async ({ db }) => {
          console.log(JSON.stringify((await getWorkflow(db, name, version)).definition, null, 2));
          return 0;
        });
      }
      default:
        throw new UsageError(command ? `unknown command "workflows ${command}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}

function versionArg(value: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(value)) throw new UsageError(`--version: a whole number from 1, not "${value}"`);
  return Number(value);
}

async function readDocument(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    console.error(`verity: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    console.error(`verity: ${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}
