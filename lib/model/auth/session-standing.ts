/**
 * Whether a console session still stands, as a pure rule. Each sign-in has
 * its own row (console_sessions); the cookie carries only that row's id and
 * the user id it was issued to. The row says whether the session was ended
 * (sign-out ends this one; a disable or a role change ends all of the
 * person's) and when its absolute lifetime runs out; the users row says
 * whether the person is disabled now. next-auth's own expiry only measures
 * idleness; the absolute lifetime ends a session however often it is used.
 */

/** Why a session row was ended; a session that ran out is `expired`, never ended. */
export type SessionEndReason = "signed_out" | "disabled" | "role_changed" | "password_changed" | "password_reset";

export type SessionClaims = { sessionId: string; userId: string };

export type SessionRecord = {
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  userDisabledAt: Date | null;
};

export type SessionStanding = "valid" | "unknown" | "ended" | "disabled" | "expired";

export function sessionStanding(
  claims: SessionClaims,
  session: SessionRecord | null,
  now: Date,
  maxAgeMs: number,
): SessionStanding {
  // A row issued to someone else cannot happen through sign-in; refusing it keeps a forged pairing dead too.
  if (!session || session.userId !== claims.userId) return "unknown";
  if (session.userDisabledAt) return "disabled";
  if (session.endedAt) return "ended";
  // The lifetime is checked against the setting now as well as the stored expiry: lowering
  // VERITY_SESSION_MAX_AGE_HOURS shortens sessions already open.
  const age = now.getTime() - session.createdAt.getTime();
  if (now >= session.expiresAt || age >= maxAgeMs || age < -60_000) return "expired";
  return "valid";
}

/** When a session created at `createdAt` runs out. */
export function sessionExpiry(createdAt: Date, maxAgeMs: number): Date {
  return new Date(createdAt.getTime() + maxAgeMs);
}
