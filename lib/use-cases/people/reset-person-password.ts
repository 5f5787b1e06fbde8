import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { hashPassword } from "@/lib/core/passwords";
import { passwordScryptN } from "@/lib/config/env";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { userIdentity } from "@/lib/model/permissions";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { endUserConsoleSessions } from "@/lib/stores/console-sessions";
import { getPerson, setUserPassword, type PersonRow } from "@/lib/stores/users";
import { generateInitialPassword, type CreatedVia } from "@/lib/use-cases/people/create-person";

/**
 * An admin gives a person a new one-time password (a forgotten one, a
 * leaked one): returned once for the admin to hand over, stored only as its
 * hash, to be replaced at the person's next sign-in. In one transaction with
 * it: a new session_version, every open session of the person ended (a
 * stolen session ends with the password it came from), and
 * `user.password_reset` in the audit log (never the password). An admin's
 * own password is theirs to change at /account, where they prove the
 * current one; a single sign-on person has no Verity password.
 */
export async function resetPersonPassword(
  db: Db,
  userId: string,
  actor: AuditActor,
  via: CreatedVia,
  now = new Date(),
): Promise<{ person: PersonRow; oneTimePassword: string; sessionsEnded: number }> {
  const person = await getPerson(db, { id: userId });
  if (!person) throw new AppError("not_found", `No person with id ${userId}.`);
  if (actor.identity === userIdentity(person.username))
    throw new AppError(
      "forbidden",
      "This is your own account: change your password under Account (/account), with your current one.",
    );
  if (!person.hasPassword)
    throw new AppError(
      "invariant_violated",
      `${person.username} signs in through single sign-on: there is no Verity password to reset; their identity provider holds it.`,
      { violations: [{ invariant: "password_account", message: "Only a password account has a password to reset." }] },
    );
  const oneTimePassword = generateInitialPassword();
  const passwordHash = await hashPassword(oneTimePassword, passwordScryptN());
  return db.$transaction(async (tx) => {
    const after = await setUserPassword(tx, person.id, { previousHash: null, passwordHash, mustChange: true });
    if (!after) throw new AppError("not_found", `No person with id ${userId}.`);
    const sessionsEnded = await endUserConsoleSessions(tx, person.id, "password_reset", now);
    await appendAuditEntry(
      tx,
      personAuditEntry("user.password_reset", after, actor, { sessions_ended: sessionsEnded, via }),
    );
    return { person: after, oneTimePassword, sessionsEnded };
  });
}
