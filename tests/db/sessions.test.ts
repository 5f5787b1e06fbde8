import { beforeAll, describe, expect, it } from "vitest";
import { signInWithPassword, signOutEverywhere } from "@/lib/adapters/auth/audit-trail";
import { checkSession } from "@/lib/adapters/auth/session-check";
import type { SessionClaims } from "@/lib/model/auth/session-standing";
import { listAuditEntries } from "@/lib/stores/audit-log";
import type { Role } from "@/lib/model/permissions";
import { createUser } from "@/lib/stores/users";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Issue 11: sessions could not be revoked and had no absolute lifetime. A
 * session token carries the user's session version at sign-in and the time
 * of it; checkSession (what every page, action and route and every cookie
 * refresh asks) holds them against the users row read now.
 */
const db = useTestDatabase();
const password = "correct horse battery";
let userId: string;

beforeAll(async () => {
  userId = (await createUser(db, { username: "ada", displayName: "Ada", role: "operator", password })).id;
});

/**
 * An administrator's change as lib/stores/users.ts makes it (setUserRole,
 * setUserDisabled): the change and a bumped session version in one write.
 */
async function changeRole(role: Role) {
  await db.user.update({ where: { id: userId }, data: { role, sessionVersion: { increment: 1 } } });
}
async function disable() {
  await db.user.update({ where: { id: userId }, data: { disabledAt: new Date(), sessionVersion: { increment: 1 } } });
}

/** What next-auth's jwt callback puts in the cookie at a sign-in. */
async function signIn(at = new Date()): Promise<SessionClaims> {
  const result = await signInWithPassword(db, { username: "ada", password, address: null }, at);
  if (result.kind !== "signed_in") throw new Error(`sign-in: ${result.kind}`);
  return { sessionVersion: result.sessionVersion, signedInAtMs: at.getTime() };
}

describe("sessions", () => {
  it("a role change reaches an open session on its next request: the session ends, the next sign-in has the new role", async () => {
    const claims = await signIn();
    expect(await checkSession(db, userId, claims)).toMatchObject({
      standing: "valid",
      principal: { id: userId, role: "operator" },
    });
    await changeRole("auditor");
    expect(await checkSession(db, userId, claims)).toEqual({ standing: "revoked", principal: null });
    expect(await checkSession(db, userId, await signIn())).toMatchObject({
      standing: "valid",
      principal: { role: "auditor" },
    });
  });

  it("sign-out ends every session saved before it, recorded in the audit log", async () => {
    const claims = await signIn();
    await signOutEverywhere(db, userId);
    expect(await checkSession(db, userId, claims)).toEqual({ standing: "revoked", principal: null });
    const entries = (await listAuditEntries(db, {}, { limit: 100 })).items.filter(
      (e) => e.action === "auth.signed_out",
    );
    expect(entries).toMatchObject([{ actor: "spiffe://verity.local/user/ada", subjectId: userId }]);
  });

  it("ends at the absolute lifetime (VERITY_SESSION_MAX_AGE_HOURS, 12 by default) however recently it was used", async () => {
    const signedInAt = new Date();
    const claims = await signIn(signedInAt);
    const hours = (h: number) => new Date(signedInAt.getTime() + h * 3_600_000);
    expect((await checkSession(db, userId, claims, hours(11.99))).standing).toBe("valid");
    expect(await checkSession(db, userId, claims, hours(12))).toEqual({ standing: "expired", principal: null });
  });

  it("a disabled person's open session ends, and their password no longer signs in", async () => {
    const claims = await signIn();
    await disable();
    expect(await checkSession(db, userId, claims)).toEqual({ standing: "disabled", principal: null });
    expect(await signInWithPassword(db, { username: "ada", password, address: null })).toEqual({ kind: "invalid" });
  });
});
