import type { Db, Tx } from "@/lib/db/client";
import { newId } from "@/lib/core/ids";
import { userIdentity, type Principal, type Role } from "@/lib/model/permissions";
import { sessionExpiry, type SessionEndReason, type SessionRecord } from "@/lib/model/auth/session-standing";

/**
 * The owner of `console_sessions`: one row per console sign-in. The cookie
 * carries the row's id; what a session may do is decided per request from
 * this row and its user (lib/adapters/auth/session-check.ts). Rows are ended,
 * never updated back to open; expired and ended rows are pruned once past a
 * retention period.
 */

/** last_seen_at moves at most this often: the per-request check writes nothing on most requests. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

export type SignInMethod = "password" | "oidc";

/**
 * Opens a session for a person whose credentials were checked at
 * `checkedSessionVersion`, in the caller's transaction (the one writing the
 * sign-in's audit entry). The user row is locked FOR SHARE and must still be
 * at that version and enabled: a disable or role change committed between
 * the password check and now wins (null), and one still in flight waits for
 * this insert and then ends the new session with the others.
 */
export async function openConsoleSession(
  tx: Tx,
  input: { userId: string; checkedSessionVersion: number; method: SignInMethod; maxAgeMs: number },
  now = new Date(),
): Promise<{ id: string; expiresAt: Date } | null> {
  const id = newId("ses", now.getTime());
  const expiresAt = sessionExpiry(now, input.maxAgeMs);
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    INSERT INTO console_sessions (id, user_id, method, created_at, last_seen_at, expires_at)
    SELECT ${id}, u.id, ${input.method}, ${now}, ${now}, ${expiresAt}
      FROM users u
     WHERE u.id = ${input.userId} AND u.session_version = ${input.checkedSessionVersion} AND u.disabled_at IS NULL
       FOR SHARE
    RETURNING id`;
  return rows[0] ? { id, expiresAt } : null;
}

export type ConsoleSessionState = SessionRecord & {
  sessionId: string;
  principal: Principal;
  /** The person's password is a one-time one: the console lets them only replace it (lib/adapters/auth/session.ts). */
  passwordMustChange: boolean;
};

type StateRow = {
  id: string;
  user_id: string;
  tenant_id: string;
  created_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  username: string;
  display_name: string;
  role: Role;
  disabled_at: Date | null;
  password_must_change: boolean;
  platform_admin: boolean;
};

/**
 * The session and its person, as every request needs them: one statement,
 * two primary-key lookups. The same statement refreshes last_seen_at when it
 * is older than a minute (the CTE runs whether or not the SELECT uses it;
 * the SELECT sees the row as it was, which is all the check needs).
 */
export async function readConsoleSession(
  db: Db | Tx,
  sessionId: string,
  now = new Date(),
): Promise<ConsoleSessionState | null> {
  const staleBefore = new Date(now.getTime() - LAST_SEEN_RESOLUTION_MS);
  const rows = await db.$queryRaw<StateRow[]>`
    WITH seen AS (
      UPDATE console_sessions SET last_seen_at = ${now}
       WHERE id = ${sessionId} AND ended_at IS NULL AND expires_at > ${now} AND last_seen_at < ${staleBefore}
      RETURNING id
    )
    SELECT s.id, s.user_id, s.tenant_id, s.created_at, s.expires_at, s.ended_at, u.username, u.display_name, u.role::text AS role, u.disabled_at,
           u.password_must_change, u.platform_admin
      FROM console_sessions s JOIN users u ON u.id = s.user_id
     WHERE s.id = ${sessionId}`;
  const row = rows[0];
  if (!row) return null;
  return {
    sessionId: row.id,
    userId: row.user_id,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    endedAt: row.ended_at ? new Date(row.ended_at) : null,
    userDisabledAt: row.disabled_at ? new Date(row.disabled_at) : null,
    passwordMustChange: row.password_must_change,
    principal: {
      kind: "user",
      id: row.user_id,
      identity: userIdentity(row.username),
      role: row.role,
      displayName: row.display_name,
      tenantId: row.tenant_id,
      platformAdmin: row.platform_admin,
    },
  };
}

/** Which tenant a console session belongs to (platform's connection), null for an unknown one. */
export async function tenantOfConsoleSession(platformDb: Db, sessionId: string): Promise<string | null> {
  const row = await platformDb.consoleSession.findUnique({ where: { id: sessionId }, select: { tenantId: true } });
  return row?.tenantId ?? null;
}

/** Ends one open session (sign-out); null when it was not open (already ended, or unknown). */
export async function endConsoleSession(
  db: Db | Tx,
  sessionId: string,
  reason: SessionEndReason,
  now = new Date(),
): Promise<{ userId: string } | null> {
  const rows = await db.$queryRaw<Array<{ user_id: string }>>`
    UPDATE console_sessions SET ended_at = ${now}, ended_reason = ${reason}
     WHERE id = ${sessionId} AND ended_at IS NULL
    RETURNING user_id`;
  return rows[0] ? { userId: rows[0].user_id } : null;
}

/**
 * Ends every open session of the person, in the caller's transaction (the
 * disable, role or password change it follows from, with its audit entry),
 * but `keepSessionId` when given: a person changing their own password stays
 * signed in where they changed it. Returns how many were open and not yet
 * expired.
 */
export async function endUserConsoleSessions(
  tx: Db | Tx,
  userId: string,
  reason: SessionEndReason,
  now = new Date(),
  keepSessionId: string | null = null,
): Promise<number> {
  const rows = await tx.$queryRaw<Array<{ live: boolean }>>`
    UPDATE console_sessions SET ended_at = ${now}, ended_reason = ${reason}
     WHERE user_id = ${userId} AND ended_at IS NULL AND id IS DISTINCT FROM ${keepSessionId}
    RETURNING expires_at > ${now} AS live`;
  return rows.filter((r) => r.live).length;
}

/**
 * Deletes the rows that stopped standing before `before`: every row's life
 * ends by its expiry at the latest (an ended row earlier), so one indexed
 * range on expires_at finds them all.
 */
export async function pruneConsoleSessions(db: Db | Tx, before: Date): Promise<number> {
  return db.$executeRaw`DELETE FROM console_sessions WHERE expires_at < ${before}`;
}
