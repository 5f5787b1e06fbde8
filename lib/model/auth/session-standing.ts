/**
 * Whether a session token still stands, as a pure rule: the token carries
 * the user's session version at sign-in and when the sign-in happened; the
 * users row carries the current version and whether the person is disabled.
 * Sign-out, disable, a role or password change bump the version, so every
 * token issued before is dead; the absolute lifetime ends a session however
 * often it is refreshed (next-auth's own expiry only measures idleness).
 */

export type SessionClaims = { sessionVersion: number; signedInAtMs: number };
export type SessionUserState = { sessionVersion: number; disabledAt: Date | null };

export type SessionStanding = "valid" | "no_user" | "disabled" | "revoked" | "expired";

export function sessionStanding(
  claims: SessionClaims,
  user: SessionUserState | null,
  now: Date,
  maxAgeMs: number,
): SessionStanding {
  if (!user) return "no_user";
  if (user.disabledAt) return "disabled";
  if (claims.sessionVersion !== user.sessionVersion) return "revoked";
  if (now.getTime() - claims.signedInAtMs >= maxAgeMs || claims.signedInAtMs > now.getTime() + 60_000) return "expired";
  return "valid";
}
