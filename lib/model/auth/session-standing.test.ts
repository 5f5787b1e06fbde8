import { describe, expect, it } from "vitest";
import { sessionStanding } from "@/lib/model/auth/session-standing";

const now = new Date("2026-12-01T12:00:00Z");
const hour = 3_600_000;
const claims = { sessionVersion: 3, signedInAtMs: now.getTime() - hour };
const user = { sessionVersion: 3, disabledAt: null };

describe("session standing", () => {
  it("stands for the current version within the absolute lifetime", () => {
    expect(sessionStanding(claims, user, now, 12 * hour)).toBe("valid");
  });
  it("ends with a bumped version, a disabled or missing user, or past the lifetime", () => {
    expect(sessionStanding(claims, { ...user, sessionVersion: 4 }, now, 12 * hour)).toBe("revoked");
    expect(sessionStanding(claims, { ...user, disabledAt: now }, now, 12 * hour)).toBe("disabled");
    expect(sessionStanding(claims, null, now, 12 * hour)).toBe("no_user");
    expect(sessionStanding(claims, user, now, hour)).toBe("expired");
    expect(sessionStanding({ ...claims, signedInAtMs: now.getTime() + hour }, user, now, 12 * hour)).toBe("expired");
  });
});
