import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { PersonRoleSchema, type PersonRole } from "@/lib/model/people/person-fields";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { setUserRole, type PersonRow } from "@/lib/stores/users";
import { lastAdminRefusal, lockPersonForChange } from "@/lib/use-cases/people/person-guards";

/**
 * Gives a person another role. The store bumps their session version in the
 * same statement, so their open sessions end on their next request. The
 * last enabled admin keeps the role.
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
    await appendAuditEntry(tx, personAuditEntry("user.role_changed", after, actor, { previous_role: person.role }));
    return after;
  });
}
