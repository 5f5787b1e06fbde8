import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { countPeople } from "@/lib/stores/users";
import { findDemoAccounts, hasDemoAccounts } from "@/lib/use-cases/people/find-demo-accounts";
import { issueSetupLink } from "@/lib/use-cases/people/issue-setup-link";

/** What a start that is not the demo finds: accounts to serve, none yet (a setup link), or demo accounts it refuses. */
export type AccountsAtStart =
  | { kind: "ready"; people: number }
  | { kind: "setup"; token: string; expiresAt: Date }
  | { kind: "refused"; message: string };

export const purgeCommand = "npm run -s verity -- demo purge";

const startActor: AuditActor = { identity: "system:start", kind: "system" };

/**
 * The accounts half of a non-demo start (scripts/start.ts). Demo accounts
 * never serve outside the demo: a database that holds them (a demo folder
 * restarted with VERITY_DEMO_DATA=false, or moved behind a public address)
 * is refused, naming them and the purge. A database with no accounts gets a
 * one-time link for its first admin.
 */
export async function prepareAccountsAtStart(db: Db, now = new Date()): Promise<AccountsAtStart> {
  const demo = await findDemoAccounts(db);
  if (hasDemoAccounts(demo)) {
    const names = [...demo.users.map((u) => `user ${u.username}`), ...demo.tokens.map((t) => `token ${t.name}`)];
    return {
      kind: "refused",
      message:
        `this database holds the demo accounts (${names.join(", ")}), whose passwords and tokens are public, ` +
        `and this start is not the demo (a DATABASE_URL, a VERITY_HOST beyond loopback, or VERITY_DEMO_DATA=false). ` +
        `Remove them with \`${purgeCommand}\` (same configuration; the demo tasks stay), or start the demo with VERITY_DEMO_DATA=true.`,
    };
  }
  const people = await countPeople(db);
  if (people > 0) return { kind: "ready", people };
  const link = await issueSetupLink(db, startActor, now);
  return { kind: "setup", token: link.token, expiresAt: link.expiresAt };
}
