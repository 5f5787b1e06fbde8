import type { Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { getPerson, lockEnabledAdmins, type PersonRow } from "@/lib/stores/users";

/**
 * The person about to change, read under the enabled admins' row locks
 * (lockEnabledAdmins), and whether they are the last enabled admin: two
 * admins removing each other at once are serialized, and the second sees
 * the first's change.
 */
export async function lockPersonForChange(
  tx: Tx,
  userId: string,
): Promise<{ person: PersonRow; isLastAdmin: boolean }> {
  const admins = await lockEnabledAdmins(tx);
  const person = await getPerson(tx, { id: userId });
  if (!person) throw new AppError("not_found", `No person with id ${userId}.`);
  return { person, isLastAdmin: admins.length === 1 && admins[0] === person.id };
}

/** The rule every change to who may act keeps: at least one enabled admin remains, so people can always be managed. */
export function lastAdminRefusal(person: PersonRow, change: string): AppError {
  return new AppError(
    "invariant_violated",
    `${person.username} is the only enabled admin: ${change} would leave nobody who can manage people. Make someone else an admin first.`,
    { violations: [{ invariant: "an_enabled_admin_remains", message: "At least one enabled admin must remain." }] },
  );
}
