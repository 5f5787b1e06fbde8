/**
 * `npm run -s verity -- demo purge`: takes a database out of the demo
 * (lib/use-cases/people/purge-demo-accounts.ts): the demo people removed,
 * the demo agent tokens revoked, audited. What a start outside the demo
 * asks for when it finds them.
 */
import { purgeDemoAccounts } from "@/lib/use-cases/people/purge-demo-accounts";
import { cliActor, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = "usage: npm run -s verity -- demo purge";

export async function runDemoCommand(argv: string[]): Promise<number> {
  try {
    if (argv[0] !== "purge" || argv.length > 1)
      throw new UsageError(argv[0] ? `unknown command "demo ${argv.join(" ")}"` : "missing a command");
  } catch (error) {
    return usageFailure(error, usage);
  }
  return withCliDatabase(async ({ db }) => {
    const purged = await purgeDemoAccounts(db, cliActor);
    if (purged.users.length === 0 && purged.tokens.length === 0) console.log("no demo accounts: nothing to purge");
    else
      console.log(
        `removed demo people: ${purged.users.map((u) => u.username).join(", ") || "none"}; revoked demo tokens: ${purged.tokens.map((t) => t.name).join(", ") || "none"}`,
      );
    return 0;
  });
}
