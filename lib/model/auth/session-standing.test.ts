import { describe, expect, it } from "vitest";
import { sessionExpiry, sessionStanding } from "@/lib/model/auth/session-standing";

const now = new Date("2026-12-01T12:00:00Z");
const hour = 3_600_000;
const claims = { sessionId: "ses_1", userId: "usr_1" };
const createdAt = new Date(now.getTime() - hour);
const session = {
  userId: "usr_1",
  createdAt,
  expiresAt: sessionExpiry(createdAt, 12 * hour),
  endedAt: null,
  userDisabledAt: null,
};

describe("session standing", () => {
  it("stands while its row is open, its person enabled, within the absolute lifetime", () => {
    expect(sessionStanding(claims, session, now, 12 * hour)).toBe("valid");
  });

  it("ends with its own row: another session of the same person ending changes nothing here", () => {
    expect(sessionStanding(claims, { ...session, endedAt: now }, now, 12 * hour)).toBe("ended");
  });

  it("ends for a disabled person, an unknown row, or a row issued to someone else", () => {
    expect(sessionStanding(claims, { ...session, userDisabledAt: now }, now, 12 * hour)).toBe("disabled");
    expect(sessionStanding(claims, null, now, 12 * hour)).toBe("unknown");
    expect(sessionStanding({ ...claims, userId: "usr_2" }, session, now, 12 * hour)).toBe("unknown");
  });

  it("expires at the stored expiry, at a shorter lifetime set since, and when created in the future", () => {
    expect(sessionStanding(claims, session, new Date(session.expiresAt.getTime() - 1), 12 * hour)).toBe("valid");
    expect(sessionStanding(claims, session, session.expiresAt, 12 * hour)).toBe("expired");
    expect(sessionStanding(claims, session, now, hour)).toBe("expired");
    expect(sessionStanding(claims, { ...session, createdAt: new Date(now.getTime() + hour) }, now, 12 * hour)).toBe(
      "expired",
    );
  });
});
