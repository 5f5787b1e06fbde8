/**
 * `npm run -s verity -- <group> <command> …`: Verity's administration
 * commands, one module per group in programs/cli/. The table is the whole
 * dispatcher: a group is a name, a line of help and a function from its
 * arguments to an exit code. Each group's module is loaded only when it runs:
 * a command starts a process, and compiling every group's imports (the
 * retention, recovery and key modules reach most of lib/) cost each one
 * seconds of CPU for nothing.
 */

// A module (for the top-level await below), though each group is imported when it runs.
export {};

const groups: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  users: {
    help: "people: create, list, role, disable, enable",
    run: (argv) => import("@/programs/cli/users").then((m) => m.runUsersCommand(argv)),
  },
  agents: {
    help: "agent identities: create (prints the token once), list, tokens <name>",
    run: (argv) => import("@/programs/cli/agents").then((m) => m.runAgentsCommand(argv)),
  },
  tokens: {
    help: "agent tokens by id: revoke, rotate --overlap 1h",
    run: (argv) => import("@/programs/cli/tokens").then((m) => m.runTokensCommand(argv)),
  },
  workflows: {
    help: "the workflow registry: publish <file>, list, get <name> [--version N]",
    run: (argv) => import("@/programs/cli/workflows").then((m) => m.runWorkflowsCommand(argv)),
  },
  tenants: {
    help: "the register of tenants: list, create <id> --name <name>, suspend <id> --reason <why>, reactivate <id> --reason <why>",
    run: (argv) => import("@/programs/cli/tenants").then((m) => m.runTenantsCommand(argv)),
  },
  keys: {
    help: "encryption at rest: status, rotate (a new data key), rotate-kek (re-wrap under a new key-encryption key)",
    run: (argv) => import("@/programs/cli/keys").then((m) => m.runKeysCommand(argv)),
  },
  demo: {
    help: "purge: remove the demo accounts from a database leaving the demo",
    run: (argv) => import("@/programs/cli/demo").then((m) => m.runDemoCommand(argv)),
  },
  retention: {
    help: "tasks --days N (finished tasks' data, every store), audit --days N, holds, hold, release <id>",
    run: (argv) => import("@/programs/cli/retention").then((m) => m.runRetentionCommand(argv)),
  },
  recovery: {
    help: "what a standby needs besides the database: export-secrets --out <file>, restore-secrets --in <file> --out <env file>, take-over --as <username> --all",
    run: (argv) => import("@/programs/cli/recovery").then((m) => m.runRecoveryCommand(argv)),
  },
};

// `--tenant <id>` (or `--tenant=<id>`), anywhere: the tenant every group's command works in.
const argv = process.argv.slice(2);
const tenantAt = argv.findIndex((a) => a === "--tenant" || a.startsWith("--tenant="));
if (tenantAt >= 0) {
  const [flag] = argv.splice(tenantAt, argv[tenantAt] === "--tenant" ? 2 : 1);
  const tenantId = flag === "--tenant" ? process.argv.slice(2)[tenantAt + 1] : flag!.slice("--tenant=".length);
  const { selectCommandTenant } = await import("@/programs/cli/cli-database");
  try {
    selectCommandTenant(tenantId ?? "");
  } catch (error) {
    console.error(`verity: --tenant: ${(error as Error).message}`);
    process.exit(2);
  }
}
const [group, ...rest] = argv;
const entry = group ? groups[group] : undefined;
if (!entry) {
  console.error(
    `${group ? `verity: unknown command group "${group}"\n\n` : ""}usage: npm run -s verity -- [--tenant <id>] <group> <command> …\n${Object.entries(
      groups,
    )
      .map(([name, g]) => `  ${name.padEnd(8)} ${g.help}`)
      .join("\n")}`,
  );
  process.exit(2);
}
process.exit(await entry.run(rest));
