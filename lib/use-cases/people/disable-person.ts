import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { setUserDisabled, type PersonRow } from "@/lib/stores/users";
import { endUserConsoleSessions } from "@/lib/stores/console-sessions";
import { lastAdminRefusal, lockPersonForChange } from "@/lib/use-cases/people/person-guards";

/**
 * Disables a person: sign-in refuses them, and all of their open console
 * sessions end in the same transaction (the per-request check also refuses
 * a disabled person's session by itself). Their history stays theirs (the
 * row is kept). The last enabled admin stays.
 */
export async function disablePerson(db: Db, userId: string, actor: AuditActor): Promise<PersonRow> {
  return db.$transaction(async (tx) => {
    const { person, isLastAdmin } = await lockPersonForChange(tx, userId);
    if (person.disabledAt)
      throw new AppError("version_conflict", `${person.username} is already disabled; nothing was changed.`);
    if (isLastAdmin) throw lastAdminRefusal(person, "disabling them");
    const after = (await setUserDisabled(tx, userId, new Date()))!;
    const ended = await endUserConsoleSessions(tx, userId, "disabled");
    await appendAuditEntry(tx, personAuditEntry("user.disabled", after, actor, { sessions_ended: ended }));
    return after;
  });
}
