import type { Db } from "@/lib/db/client";
import { can, requirePermission, type Permission, type Principal, type Role } from "@/lib/model/permissions";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { childLogger } from "@/lib/config/log";
import { getEnv, passwordScryptN } from "@/lib/config/env";
import { hashPassword, needsRehash } from "@/lib/core/passwords";
import { addressThrottle, usernameThrottle, usernameThrottleKey } from "@/lib/model/auth/sign-in-throttle";
import { forgiveSignInAttempt, reserveSignInAttempt } from "@/lib/stores/sign-in-throttles";
import { linkOidcUser, replaceWeakPasswordHash, verifyUserCredentials } from "@/lib/stores/users";
import {
  endConsoleSession,
  endUserConsoleSessions,
  openConsoleSession,
  readConsoleSession,
} from "@/lib/stores/console-sessions";

/**
 * Sign-ins and denied permissions in the audit log. Separate from
 * permissions.ts, which stays free of database imports because client
 * components import `can` from it.
 *
 * Neither event has a business transaction to join: each entry is its own
 * transaction, committed before the answer leaves (a sign-in is not granted
 * and a 403 is not sent before the record exists). Unauthenticated requests
 * (no token, no session, a wrong password) are not recorded one by one:
 * anyone on the network could fill the log with them, and they carry no
 * identity to account for; the sign-in throttle records them as aggregates.
 */

const log = childLogger("auth");
const anonymous: AuditActor = { identity: "anonymous", kind: "anonymous" };

function actorOfPrincipal(principal: Principal): AuditActor {
  return { identity: principal.identity, kind: principal.kind === "agent" ? "agent" : "user" };
}

export type PasswordSignIn =
  | { kind: "signed_in"; principal: Principal; sessionId: string }
  | { kind: "invalid" }
  | { kind: "throttled"; retryAt: Date };

/**
 * The console's password check, throttled per username and per address
 * (lib/model/auth/sign-in-throttle.ts): while either is blocked the password
 * is not even checked, a correct one included. Successes are recorded one
 * by one; failures only as aggregates, one `auth.sign_in_throttled` entry
 * when a key becomes blocked (with its count), since anyone can send them
 * and each entry is a hash-chained row. The password is never recorded; the
 * username typed is (it is how an auditor tells a forgotten password from
 * someone trying names). A hash made with weaker scrypt parameters is
 * replaced now that the password is known. The sign-in opens its own
 * console session in the transaction of its audit entry, which names it.
 */
export async function signInWithPassword(
  db: Db,
  input: { username: string; password: string; address: string | null },
  now = new Date(),
): Promise<PasswordSignIn> {
  const { username, password, address } = input;
  const userKey = { key: usernameThrottleKey(username), rule: usernameThrottle };
  const keys = address ? [userKey, { key: `address:${address}`, rule: addressThrottle }] : [userKey];
  const reservation = await reserveSignInAttempt(db, keys, now);
  if (!reservation.allowed) return { kind: "throttled", retryAt: reservation.retryAt };

  const candidate = await verifyUserCredentials(db, username, password);
  if (!candidate) {
    for (const block of reservation.blocked) {
      const isAddress = block.key !== userKey.key;
      await appendAuditEntry(db, {
        action: "auth.sign_in_throttled",
        actor: anonymous,
        subject: isAddress ? { type: "network_address", id: address! } : { type: "user", id: username },
        details: {
          scope: isAddress ? "address" : "username",
          ...(isAddress ? { address } : { username }),
          failures: block.failures,
          blocked_until: block.blockedUntil.toISOString(),
          method: "password",
        },
      });
    }
    return { kind: "invalid" };
  }

  const { principal } = candidate;
  await forgiveSignInAttempt(db, { clear: [userKey.key], forgive: keys.filter((k) => k !== userKey) }, now);
  // Hashed before the transaction: scrypt takes most of a second, the transaction only the write.
  const n = passwordScryptN();
  const strongerHash = needsRehash(candidate.passwordHash, n) ? await hashPassword(password, n) : null;
  const sessionId = await db.$transaction(async (tx) => {
    const session = await openConsoleSession(
      tx,
      {
        userId: principal.id,
        checkedSessionVersion: candidate.sessionVersion,
        method: "password",
        maxAgeMs: maxAgeMs(),
      },
      now,
    );
    // The person was disabled or re-roled between the password check and now: that change wins.
    if (!session) return null;
    const rehashed = strongerHash
      ? await replaceWeakPasswordHash(tx, principal.id, candidate.passwordHash, strongerHash)
      : false;
    await appendAuditEntry(tx, {
      action: "auth.signed_in",
      actor: actorOfPrincipal(principal),
      subject: { type: "user", id: principal.id },
      details: {
        username,
        role: principal.role,
        method: "password",
        session_id: session.id,
        ...(rehashed ? { password_rehashed: true } : {}),
      },
    });
    return session.id;
  });
  return sessionId ? { kind: "signed_in", principal, sessionId } : { kind: "invalid" };
}

function maxAgeMs(): number {
  return getEnv().VERITY_SESSION_MAX_AGE_HOURS * 3_600_000;
}

/**
 * A single sign-on: the person linked (or created) by their provider
 * subject with the mapped role, recorded like a password sign-in; null when
 * that person is disabled. A mapped role that changed ends the person's
 * other sessions, as an administrator's role change does.
 */
export async function signInWithOidc(
  db: Db,
  identity: { subject: string; username: string; displayName: string; role: Role },
  now = new Date(),
): Promise<{ principal: Principal; sessionId: string } | null> {
  return db.$transaction(async (tx) => {
    const linked = await linkOidcUser(tx, identity);
    if (!linked) return null;
    const ended = linked.roleChanged ? await endUserConsoleSessions(tx, linked.principal.id, "role_changed", now) : 0;
    const session = await openConsoleSession(
      tx,
      {
        userId: linked.principal.id,
        checkedSessionVersion: linked.sessionVersion,
        method: "oidc",
        maxAgeMs: maxAgeMs(),
      },
      now,
    );
    // linkOidcUser read the row in this transaction; only a disable committed since can refuse it.
    if (!session) return null;
    await appendAuditEntry(tx, {
      action: "auth.signed_in",
      actor: actorOfPrincipal(linked.principal),
      subject: { type: "user", id: linked.principal.id },
      details: {
        username: identity.username,
        role: linked.principal.role,
        method: "oidc",
        session_id: session.id,
        ...(linked.created ? { account_created: true } : {}),
        ...(linked.roleChanged ? { role_changed: true, sessions_ended: ended } : {}),
      },
    });
    return { principal: linked.principal, sessionId: session.id };
  });
}

/**
 * Sign-out ends this session only, recorded; the person's sessions in other
 * browsers stay. Signing out of a session already ended (or not this
 * person's) changes and records nothing.
 */
export async function signOut(db: Db, claims: { sessionId: string; userId: string }, now = new Date()): Promise<void> {
  await db.$transaction(async (tx) => {
    const session = await readConsoleSession(tx, claims.sessionId, now);
    if (!session || session.userId !== claims.userId) return;
    if (!(await endConsoleSession(tx, claims.sessionId, "signed_out", now))) return;
    await appendAuditEntry(tx, {
      action: "auth.signed_out",
      actor: actorOfPrincipal(session.principal),
      subject: { type: "user", id: claims.userId },
      details: { session_id: claims.sessionId },
    });
  });
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
