import type { Db } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { sessionStanding, type SessionClaims, type SessionStanding } from "@/lib/model/auth/session-standing";
import type { Principal } from "@/lib/model/permissions";
import { getUserSessionState } from "@/lib/stores/users";

/**
 * A session token's claims against the users row, read now: every page,
 * action and route (through getSessionPrincipal) and every refresh of the
 * cookie (next-auth's jwt callback) ask this, so a sign-out, a disable or a
 * role change is seen on the very next request.
 */
export async function checkSession(
  db: Db,
  userId: string,
  claims: SessionClaims,
  now = new Date(),
): Promise<{ standing: SessionStanding; principal: Principal | null }> {
  const state = await getUserSessionState(db, userId);
  const standing = sessionStanding(claims, state, now, getEnv().VERITY_SESSION_MAX_AGE_HOURS * 3_600_000);
  return { standing, principal: standing === "valid" && state ? state.principal : null };
}
