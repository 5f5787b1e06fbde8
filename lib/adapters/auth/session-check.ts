import { cache } from "react";
import type { Db } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { sessionStanding, type SessionClaims, type SessionStanding } from "@/lib/model/auth/session-standing";
import type { Principal } from "@/lib/model/permissions";
import { readConsoleSession } from "@/lib/stores/console-sessions";

/**
 * A session token's claims against its console_sessions row and its user,
 * read now in one statement: every page, action and route (through
 * getSessionPrincipal) and every refresh of the cookie (next-auth's jwt
 * callback) ask this, so a sign-out, a disable, a role or password change is
 * seen on the very next request. `passwordMustChange`: the session stands,
 * but its person holds a one-time password and may do nothing else before
 * replacing it (lib/adapters/auth/session.ts keeps them to /account).
 */
export async function checkSession(
  db: Db,
  claims: SessionClaims,
  now = new Date(),
): Promise<{ standing: SessionStanding; principal: Principal | null; passwordMustChange: boolean }> {
  const state = await readConsoleSession(db, claims.sessionId, now);
  const standing = sessionStanding(claims, state, now, getEnv().VERITY_SESSION_MAX_AGE_HOURS * 3_600_000);
  const valid = standing === "valid" && state !== null;
  return {
    standing,
    principal: valid ? state.principal : null,
    passwordMustChange: valid ? state.passwordMustChange : false,
  };
}

/**
 * checkSession once per request for the same claims: a page's
 * getServerSession runs next-auth's jwt callback, which checks, and then
 * getSessionPrincipal needs the principal; React's request cache makes that
 * one database round trip. Outside a React request (a route handler, a
 * test) it is checkSession itself.
 */
export const checkSessionOncePerRequest = cache(
  (db: Db, sessionId: string, userId: string): ReturnType<typeof checkSession> =>
    checkSession(db, { sessionId, userId }),
);
