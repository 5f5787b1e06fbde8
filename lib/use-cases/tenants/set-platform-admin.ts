import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { personAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { writeAsTenant } from "@/lib/stores/tenants";
import { findPersonAnyTenant, setUserPlatformAdmin } from "@/lib/stores/users";

/**
 * Makes a person a platform admin, or no longer one: the CLI's
 * `tenants grant-platform-admin` / `revoke-platform-admin`, run on the
 * server's host with the owner's connection. There is no console path: a
 * tenant's admin manages people through their tenant's client, which neither
 * reads nor writes this flag, so no tenant can make itself master of the
 * others. Recorded in the person's own tenant chain, in the same transaction;
 * `changed` is false when the person was so already (and nothing is recorded).
 */
export async function setPlatformAdmin(
  platformDb: Db,
  username: string,
  platformAdmin: boolean,
  actor: AuditActor,
): Promise<{ username: string; tenantId: string; changed: boolean }> {
  return platformDb.$transaction(async (tx) => {
    const person = await findPersonAnyTenant(tx, username);
    if (!person) throw new AppError("not_found", `No person ${username}.`);
    const changed = await setUserPlatformAdmin(tx, person.id, platformAdmin);
    if (changed) {
      await writeAsTenant(tx, person.tenantId);
      await appendAuditEntry(
        tx,
        personAuditEntry(platformAdmin ? "user.platform_admin_granted" : "user.platform_admin_revoked", person, actor),
      );
    }
    return { username: person.username, tenantId: person.tenantId, changed };
  });
}
