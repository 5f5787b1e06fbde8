import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { PersonRoleSchema, type PersonRole } from "@/lib/model/people/person-fields";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { setUserRole, type PersonRow } from "@/lib/stores/users";
import { endUserConsoleSessions } from "@/lib/stores/console-sessions";
import { lastAdminRefusal, lockPersonForChange } from "@/lib/use-cases/people/person-guards";

/**
 * Gives a person another role and ends all of their open console sessions in
 * the same transaction (each browser of theirs finds its session ended on
 * its next request and signs in again under the new role). The last enabled
 * admin keeps the role.
 */
export async function changePersonRole(
  db: Db,
  userId: string,
  rawRole: PersonRole,
  actor: AuditActor,
): Promise<PersonRow> {
  const role = parseOrThrow(PersonRoleSchema, rawRole);
  return db.$transaction(async (tx) => {
    const { person, isLastAdmin } = await lockPersonForChange(tx, userId);
    if (person.role === role)
      throw new AppError("version_conflict", `${person.username} already has the ${role} role; nothing was changed.`);
    if (isLastAdmin) throw lastAdminRefusal(person, `making them ${role}`);
    const after = (await setUserRole(tx, userId, role))!;
    const ended = await endUserConsoleSessions(tx, userId, "role_changed");
    await appendAuditEntry(
      tx,
      personAuditEntry("user.role_changed", after, actor, { previous_role: person.role, sessions_ended: ended }),
    );
    return after;
  });
}
