/**
 * `npm run -s verity -- agents …`: agent identities and their tokens, for
 * scripts and tests that provision agents. Recorded in the audit log as
 * `system:cli`; a token is printed once and only its hash is stored.
 *
 *   agents create <name> [--workflows a,b|*] [--tools t1,t2|*] [--take-over]
 *                 [--read-restricted --as <username>] [--expires-in 30d] [--json]
 *   agents list [--json]
 *   agents tokens <name> [--json]
 *
 * --workflows and --tools left out mean every one ("*", the column's
 * default); --take-over grants take_over_leases; --read-restricted grants
 * read_restricted, only with --as naming an enabled person of the tenant who
 * holds data:restricted (the grant is recorded as theirs); without
 * --expires-in the token does not expire.
 */
import { parseArgs } from "node:util";
import { agentIdentity, type AgentScopes } from "@/lib/model/agent-scopes";
import { listApiTokens, type ApiTokenView } from "@/lib/stores/api-tokens";
import { createAgent } from "@/lib/use-cases/agents/create-agent";
import { listAgents, tokenStateOf } from "@/lib/use-cases/agents/list-agents";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";
import { parseDurationArg } from "@/programs/cli/durations";
import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { can, userIdentity } from "@/lib/model/permissions";
import { getPerson } from "@/lib/stores/users";

const usage = `usage: npm run -s verity -- agents <command>
  create <name> [--workflows a,b|*] [--tools t1,t2|*] [--take-over]
         [--read-restricted --as <username>] [--expires-in 30d] [--json]
  list [--json]
  tokens <name> [--json]`;

export async function runAgentsCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        workflows: { type: "string" },
        tools: { type: "string" },
        "take-over": { type: "boolean", default: false },
        "read-restricted": { type: "boolean", default: false },
        as: { type: "string" },
        "expires-in": { type: "string" },
        json: { type: "boolean", default: false },
      },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  try {
    switch (command) {
      case "create": {
        const name = requireArg(rest[0], "<name>");
        const scopes: AgentScopes = {
          workflows: nameList(values.workflows),
          tools: nameList(values.tools),
          take_over_leases: values["take-over"],
          ...(values["read-restricted"] ? { read_restricted: true } : {}),
        };
        if (values["read-restricted"] && !values.as)
          throw new UsageError(
            "--read-restricted needs --as <username>: a person who may read restricted fields (data:restricted) grants it",
          );
        const expiresIn = values["expires-in"];
        const expiresAt = expiresIn ? new Date(Date.now() + parseDurationArg(expiresIn, "--expires-in")) : null;
        return await withCliDatabase(async ({ db }) => {
          const grantor = values.as ? await grantorOf(db, values.as) : null;
          if (values.as && !grantor) {
            console.error(`verity: no enabled person "${values.as}" in this tenant`);
            return 1;
          }
          const { identity, token, view } = await createAgent(
            db,
            { name, scopes, expires_at: expiresAt },
            grantor?.actor ?? cliActor,
            { readsRestricted: grantor?.readsRestricted ?? false },
          );
          if (values.json) console.log(JSON.stringify({ ...tokenJson(view), identity, token, token_id: view.id }));
          else {
            console.log(
              `created ${identity}, token ${view.id}${view.expiresAt ? `, expires ${view.expiresAt.toISOString()}` : ""}`,
            );
            console.log(`token (shown once, store it now): ${token}`);
          }
          return 0;
        });
      }
      case "list":
        return await withCliDatabase(async ({ db }) => {
          const agents = await listAgents(db);
          if (values.json)
            console.log(
              JSON.stringify(
                agents.map((a) => ({
                  identity: a.identity,
                  name: a.name,
                  tokens: a.tokens.length,
                  active_tokens: a.liveTokens,
                })),
              ),
            );
          else
            for (const a of agents)
              console.log(`${a.identity.padEnd(50)} ${a.liveTokens}/${a.tokens.length} tokens live`);
          return 0;
        });
      case "tokens": {
        const name = requireArg(rest[0], "<name>");
        return await withCliDatabase(async ({ db }) => {
          const tokens = await listApiTokens(db, name.startsWith("spiffe://") ? name : agentIdentity(name));
          if (values.json) console.log(JSON.stringify(tokens.map((t) => ({ id: t.id, ...tokenJson(t) }))));
          else
            for (const t of tokens)
              console.log(
                `${t.id}  ${t.prefix}…  ${tokenStateOf(t, new Date()).padEnd(8)} created ${t.createdAt.toISOString()}  expires ${t.expiresAt?.toISOString() ?? "never"}  last used ${t.lastUsedAt?.toISOString() ?? "never"}`,
              );
          return 0;
        });
      }
      default:
        throw new UsageError(command ? `unknown command "agents ${command}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}

/** `a,b` → ["a", "b"]; left out or `*` → every name. */
function nameList(value: string | undefined): AgentScopes["workflows"] {
  if (value === undefined || value.trim() === "*") return "*";
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** A token as the CLI shows it again: never the secret. */
export function tokenJson(t: ApiTokenView) {
  return {
    name: t.name,
    identity: t.identity,
    prefix: t.prefix,
    scopes: t.scopes,
    state: tokenStateOf(t, new Date()),
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
  };
}

/** The person --as names, as the grant is recorded, and whether they themselves may read restricted fields. */
async function grantorOf(db: Db, username: string): Promise<{ actor: AuditActor; readsRestricted: boolean } | null> {
  const person = await getPerson(db, { username });
  if (!person || person.disabledAt) return null;
  return {
    actor: { identity: userIdentity(username), kind: "user" },
    readsRestricted: can(person, "data:restricted"),
  };
}
