/**
 * `npm run -s verity -- <group> <command> …`: Verity's administration
 * commands, one module per group in programs/cli/. The table is the whole
 * dispatcher: a group is a name, a line of help and a function from its
 * arguments to an exit code.
 */
import { runAgentsCommand } from "@/programs/cli/agents";
import { runDemoCommand } from "@/programs/cli/demo";
import { runKeysCommand } from "@/programs/cli/keys";
import { runRecoveryCommand } from "@/programs/cli/recovery";
import { runRetentionCommand } from "@/programs/cli/retention";
import { runUsersCommand } from "@/programs/cli/users";
import { runTokensCommand } from "@/programs/cli/tokens";
import { runWorkflowsCommand } from "@/programs/cli/workflows";

const groups: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  users: { help: "people: create, list, role, disable, enable", run: runUsersCommand },
  agents: { help: "agent identities: create (prints the token once), list, tokens <name>", run: runAgentsCommand },
  tokens: { help: "agent tokens by id: revoke, rotate --overlap 1h", run: runTokensCommand },
  workflows: {
    help: "the workflow registry: publish <file>, list, get <name> [--version N]",
    run: runWorkflowsCommand,
  },
  keys: {
    help: "encryption at rest: status, rotate (a new data key), rotate-kek (re-wrap under a new key-encryption key)",
    run: runKeysCommand,
  },
  demo: { help: "purge: remove the demo accounts from a database leaving the demo", run: runDemoCommand },
  retention: {
    help: "tasks --days N (finished tasks' data, every store), audit --days N, holds, hold, release <id>",
    run: runRetentionCommand,
  },
  recovery: {
    help: "what a standby needs besides the database: export-secrets --out <file>, restore-secrets --in <file> --out <env file>, take-over --as <username> --all",
    run: runRecoveryCommand,
  },
};

const [group, ...rest] = process.argv.slice(2);
const entry = group ? groups[group] : undefined;
if (!entry) {
  console.error(
    `${group ? `verity: unknown command group "${group}"\n\n` : ""}usage: npm run -s verity -- <group> <command> …\n${Object.entries(
      groups,
    )
      .map(([name, g]) => `  ${name.padEnd(8)} ${g.help}`)
      .join("\n")}`,
  );
  process.exit(2);
}
process.exit(await entry.run(rest));
