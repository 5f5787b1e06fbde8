/**
 * `npm run -s verity -- tokens …`: one agent token by its id (as `agents
 * tokens <name>` lists them).
 *
 *   tokens revoke <id>                    refused from the next request on
 *   tokens rotate <id> [--overlap 1h] [--json]
 *                                         a new token (printed once) with the same scopes;
 *                                         the old one works for the overlap (default 1h), then expires
 */
import { parseArgs } from "node:util";
import { revokeAgentToken } from "@/lib/use-cases/agents/revoke-agent-token";
import { rotateAgentToken } from "@/lib/use-cases/agents/rotate-agent-token";
import { tokenJson } from "@/programs/cli/agents";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";
import { parseDurationArg } from "@/programs/cli/durations";

const usage = `usage: npm run -s verity -- tokens <command>
  revoke <id>
  rotate <id> [--overlap 1h] [--json]`;

export async function runTokensCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { overlap: { type: "string" }, json: { type: "boolean", default: false } },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  try {
    switch (command) {
      case "revoke": {
        const id = requireArg(rest[0], "<id>");
        return await withCliDatabase(async ({ db }) => {
          const { token } = await revokeAgentToken(db, { token_id: id }, cliActor);
          if (values.json) console.log(JSON.stringify({ id: token.id, ...tokenJson(token) }));
          else console.log(`revoked ${token.id} (${token.identity}) at ${token.revokedAt?.toISOString()}`);
          return 0;
        });
      }
      case "rotate": {
        const id = requireArg(rest[0], "<id>");
        const overlapMs = parseDurationArg(values.overlap ?? "1h", "--overlap");
        return await withCliDatabase(async ({ db }) => {
          const rotated = await rotateAgentToken(
            db,
            { token_id: id, overlap_seconds: Math.round(overlapMs / 1000) },
            cliActor,
          );
          if (values.json)
            console.log(
              JSON.stringify({
                identity: rotated.view.identity,
                token: rotated.token,
                token_id: rotated.view.id,
                previous: { id: rotated.previous.id, expires_at: rotated.previous.expiresAt?.toISOString() ?? null },
              }),
            );
          else {
            console.log(
              `new token ${rotated.view.id} for ${rotated.view.identity}; ${id} stops working at ${rotated.previous.expiresAt?.toISOString()}`,
            );
            console.log(`token (shown once, store it now): ${rotated.token}`);
          }
          return 0;
        });
      }
      default:
        throw new UsageError(command ? `unknown command "tokens ${command}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}
