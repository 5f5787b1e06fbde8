import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { setUserDisabled, type PersonRow } from "@/lib/stores/users";
import { lockPersonForChange } from "@/lib/use-cases/people/person-guards";

/** Lets a disabled person sign in again (with their password as it was); the disable ended their sessions, so there are none to end. */
export async function enablePerson(db: Db, userId: string, actor: AuditActor): Promise<PersonRow> {
  return db.$transaction(async (tx) => {
    const { person } = await lockPersonForChange(tx, userId);
    if (!person.disabledAt)
      throw new AppError("version_conflict", `${person.username} is not disabled; nothing was changed.`);
    const after = (await setUserDisabled(tx, userId, null))!;
    await appendAuditEntry(tx, personAuditEntry("user.enabled", after, actor));
    return after;
  });
}
