import type { Db } from "@/lib/db/client";
import { can, requirePermission, type Permission, type Principal } from "@/lib/model/permissions";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { childLogger } from "@/lib/config/log";
import { verifyUserCredentials } from "@/lib/stores/users";

/**
 * Sign-ins and denied permissions in the audit log. Separate from
 * permissions.ts, which stays free of database imports because client
 * components import `can` from it.
 *
 * Neither event has a business transaction to join: each entry is its own
 * transaction, committed before the answer leaves (a sign-in is not granted
 * and a 403 is not sent before the record exists). Unauthenticated requests
 * (no token, no session) are not recorded: anyone on the network could fill
 * the log with them, and they carry no identity to account for.
 */

const log = childLogger("auth");
const anonymous: AuditActor = { identity: "anonymous", kind: "anonymous" };

function actorOfPrincipal(principal: Principal): AuditActor {
  return { identity: principal.identity, kind: principal.kind === "agent" ? "agent" : "user" };
}

/**
 * The console's password check, recorded either way. The password is never
 * recorded; the username typed is (it is how an auditor tells a forgotten
 * password from someone trying names).
 */
export async function signInWithPassword(db: Db, username: string, password: string): Promise<Principal | null> {
  const principal = await verifyUserCredentials(db, username, password);
  if (principal) {
    await appendAuditEntry(db, {
      action: "auth.signed_in",
      actor: actorOfPrincipal(principal),
      subject: { type: "user", id: principal.id },
      details: { username, role: principal.role, method: "password" },
    });
  } else {
    await appendAuditEntry(db, {
      action: "auth.sign_in_failed",
      actor: anonymous,
      subject: { type: "user", id: username },
      details: { username, method: "password", reason: "invalid_credentials" },
    });
  }
  return principal;
}

/**
 * Records that `principal` was refused `permission` at `where` (a route,
 * a page). A failure to record is logged and the refusal stands: a denial
 * must never become a 500, let alone an allow.
 */
export async function recordPermissionDenied(
  db: Db,
  principal: Principal,
  permission: Permission,
  where: string,
): Promise<void> {
  try {
    await appendAuditEntry(db, {
      action: "auth.denied",
      actor: actorOfPrincipal(principal),
      subject: { type: "permission", id: permission },
      details: { principal_id: principal.id, role: principal.role, where },
    });
  } catch (error) {
    log.error({ err: error, permission, where }, "could not record a denied permission in the audit log");
  }
}

/** requirePermission, with the denial recorded before it is thrown. */
export async function requirePermissionRecorded(
  db: Db,
  principal: Principal | null | undefined,
  permission: Permission,
  where: string,
): Promise<Principal> {
  if (principal && !can(principal, permission)) await recordPermissionDenied(db, principal, permission, where);
  return requirePermission(principal, permission);
}
