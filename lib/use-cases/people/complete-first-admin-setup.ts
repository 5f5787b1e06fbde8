import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { FirstAdminSchema, type FirstAdmin } from "@/lib/model/people/person-fields";
import { userIdentity } from "@/lib/model/permissions";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { consumeSetupToken, isSetupTokenUsable } from "@/lib/stores/setup-tokens";
import { countPeople, createUser, getPerson, type PersonRow } from "@/lib/stores/users";

const linkUnusable =
  "This setup link is used up or expired. Restart Verity for a new one, or create an admin with `npm run -s verity -- users create <username> --role admin`.";

/** Whether /setup shows its form: the link works and nobody has an account yet. */
export async function isFirstAdminSetupOpen(db: Db, token: string, now = new Date()): Promise<boolean> {
  return (await countPeople(db)) === 0 && (await isSetupTokenUsable(db, token, now));
}

/**
 * Creates the deployment's first admin from the setup link, in one
 * transaction: the users table is locked (two links used at once make one
 * admin, not two), the deployment must still have no accounts, the link is
 * used up (unused and unexpired, checked in its UPDATE), the admin created
 * and the audit entry appended. A refusal changes nothing.
 */
export async function completeFirstAdminSetup(db: Db, raw: FirstAdmin, now = new Date()): Promise<PersonRow> {
  const input = parseOrThrow(FirstAdminSchema, raw);
  const actor = { identity: userIdentity(input.username), kind: "user" as const };
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`;
    if ((await countPeople(tx)) > 0)
      throw new AppError("invariant_violated", "This deployment has accounts already: sign in, or ask an admin.", {
        violations: [{ invariant: "setup_only_without_accounts", message: "The first admin exists." }],
      });
    const tokenId = await consumeSetupToken(tx, input.token, actor.identity, now);
    if (!tokenId) throw new AppError("forbidden", linkUnusable);
    const created = await createUser(tx, {
      username: input.username,
      displayName: input.display_name,
      role: "admin",
      password: input.password,
      // The setup link is the first tenant's (`default`), printed on the server's host: whoever holds it
      // installed the deployment, and is the one who can open and suspend the other tenants.
      platformAdmin: true,
    });
    const person = (await getPerson(tx, { id: created.id }))!;
    await appendAuditEntry(
      tx,
      personAuditEntry("user.created", person, actor, {
        display_name: person.displayName,
        via: "setup_link",
        setup_token_id: tokenId,
      }),
    );
    return person;
  });
}
