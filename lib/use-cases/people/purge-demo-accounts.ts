import type { Db } from "@/lib/db/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { revokeApiToken } from "@/lib/stores/api-tokens";
import { deleteUsers } from "@/lib/stores/users";
import { findDemoAccounts, type DemoAccounts } from "@/lib/use-cases/people/find-demo-accounts";

/**
 * Takes a database out of the demo: revokes the demo agent tokens (each with
 * its own audit entry, by the token store) and removes the demo people in one
 * transaction with a `demo.purged` entry (their public passwords are the
 * risk; history keeps their identities as strings). The demo tasks stay.
 * Run again after an interruption, it finishes; with nothing left it changes
 * and records nothing.
 */
export async function purgeDemoAccounts(db: Db, actor: AuditActor): Promise<DemoAccounts> {
  const found = await findDemoAccounts(db);
  for (const token of found.tokens) await revokeApiToken(db, token.id, actor);
  if (found.users.length > 0) {
    await db.$transaction(async (tx) => {
      await deleteUsers(
        tx,
        found.users.map((u) => u.id),
      );
      await appendAuditEntry(tx, {
        action: "demo.purged",
        actor,
        subject: { type: "deployment", id: "demo-accounts" },
        details: {
          removed_users: found.users.map((u) => u.username),
          revoked_tokens: found.tokens.map((t) => ({ id: t.id, name: t.name })),
        },
      });
    });
  }
  return found;
}
