import { beforeAll, describe, expect, it } from "vitest";
import { signInWithPassword, signOut } from "@/lib/adapters/auth/audit-trail";
import { checkSession } from "@/lib/adapters/auth/session-check";
import type { SessionClaims } from "@/lib/model/auth/session-standing";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { openConsoleSession, pruneConsoleSessions } from "@/lib/stores/console-sessions";
import { createUser, setUserDisabled } from "@/lib/stores/users";
import { changePersonRole } from "@/lib/use-cases/people/change-person-role";
import { disablePerson } from "@/lib/use-cases/people/disable-person";
import { enablePerson } from "@/lib/use-cases/people/enable-person";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Issue 11: sessions could not be revoked and had no absolute lifetime; then
 * sign-out ended every session of the person (the version was per user), so
 * signing out on a phone signed the laptop out too. Each sign-in now has its
 * own console_sessions row; the cookie carries its id, and checkSession (what
 * every page, action and route and every cookie refresh asks) reads the row
 * and its user in one statement.
 */
const db = useTestDatabase();
const password = "correct horse battery";
const admin = { identity: "spiffe://verity.local/user/root", kind: "user" as const };
let userId: string;

beforeAll(async () => {
  userId = (await createUser(db, { username: "ada", displayName: "Ada", role: "operator", password })).id;
  // The last enabled admin cannot be changed; Ada is not that admin.
  await createUser(db, { username: "root", displayName: "Root", role: "admin", password: "root-pw" });
});

/** What next-auth's jwt callback puts in the cookie at a sign-in. */
async function signIn(at = new Date()): Promise<SessionClaims> {
  const result = await signInWithPassword(db, { username: "ada", password, address: null }, at);
  if (result.kind !== "signed_in") throw new Error(`sign-in: ${result.kind}`);
  return { sessionId: result.sessionId, userId: result.principal.id };
}

async function auditOf(action: string) {
  return (await listAuditEntries(db, {}, { limit: 500 })).items.filter((e) => e.action === action);
}

describe("sessions", () => {
  it("sign-out ends that session only: the person's other browser stays signed in; recorded with the session id", async () => {
    const phone = await signIn();
    const laptop = await signIn();
    expect(phone.sessionId).not.toBe(laptop.sessionId);
    await signOut(db, phone);
    expect(await checkSession(db, phone)).toEqual({ standing: "ended", principal: null, passwordMustChange: false });
    expect(await checkSession(db, laptop)).toMatchObject({ standing: "valid", principal: { id: userId } });
    const row = await db.consoleSession.findUniqueOrThrow({ where: { id: phone.sessionId } });
    expect(row).toMatchObject({ endedReason: "signed_out", method: "password" });
    expect(row.endedAt).not.toBeNull();
    const out = await auditOf("auth.signed_out");
    expect(out).toMatchObject([
      { actor: "spiffe://verity.local/user/ada", subjectId: userId, details: { session_id: phone.sessionId } },
    ]);
    const signedIn = await auditOf("auth.signed_in");
    expect(signedIn.map((e) => (e.details as { session_id?: string }).session_id)).toEqual(
      expect.arrayContaining([phone.sessionId, laptop.sessionId]),
    );
    // Signing out again, or with someone else's user id, changes and records nothing.
    await signOut(db, phone);
    await signOut(db, { sessionId: laptop.sessionId, userId: "usr_someone_else" });
    expect(await auditOf("auth.signed_out")).toHaveLength(1);
    expect((await checkSession(db, laptop)).standing).toBe("valid");
  });

  it("a role change ends all of the person's open sessions; the next sign-in has the new role", async () => {
    const a = await signIn();
    const b = await signIn();
    await changePersonRole(db, userId, "auditor", admin);
    expect(await checkSession(db, a)).toEqual({ standing: "ended", principal: null, passwordMustChange: false });
    expect(await checkSession(db, b)).toEqual({ standing: "ended", principal: null, passwordMustChange: false });
    const [entry] = await auditOf("user.role_changed");
    expect((entry?.details as { sessions_ended: number }).sessions_ended).toBeGreaterThanOrEqual(2);
    expect(await checkSession(db, await signIn())).toMatchObject({ standing: "valid", principal: { role: "auditor" } });
  });

  it("a disable ends every session, a sign-in is refused; enabled again, the old sessions stay ended", async () => {
    const claims = await signIn();
    await disablePerson(db, userId, admin);
    expect(await checkSession(db, claims)).toEqual({
      standing: "disabled",
      principal: null,
      passwordMustChange: false,
    });
    expect(await db.consoleSession.findUniqueOrThrow({ where: { id: claims.sessionId } })).toMatchObject({
      endedReason: "disabled",
    });
    expect(await signInWithPassword(db, { username: "ada", password, address: null })).toEqual({ kind: "invalid" });
    await enablePerson(db, userId, admin);
    expect(await checkSession(db, claims)).toEqual({ standing: "ended", principal: null, passwordMustChange: false });
    expect(await db.consoleSession.count({ where: { userId, endedAt: null } })).toBe(0);
  });

  it("a session is opened only at the version the password was checked at: a change in between wins", async () => {
    const row = await db.user.findUniqueOrThrow({ where: { id: userId } });
    await setUserDisabled(db, userId, new Date());
    await setUserDisabled(db, userId, null);
    const opened = await db.$transaction((tx) =>
      openConsoleSession(tx, {
        userId,
        checkedSessionVersion: row.sessionVersion,
        method: "password",
        maxAgeMs: 3_600_000,
      }),
    );
    expect(opened).toBeNull();
  });

  it("ends at the absolute lifetime (VERITY_SESSION_MAX_AGE_HOURS, 12 by default) however recently it was used", async () => {
    const signedInAt = new Date();
    const claims = await signIn(signedInAt);
    const hours = (h: number) => new Date(signedInAt.getTime() + h * 3_600_000);
    expect((await checkSession(db, claims, hours(11.99))).standing).toBe("valid");
    expect(await checkSession(db, claims, hours(12))).toEqual({
      standing: "expired",
      principal: null,
      passwordMustChange: false,
    });
    const row = await db.consoleSession.findUniqueOrThrow({ where: { id: claims.sessionId } });
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(12 * 3_600_000);
  });

  it("a request refreshes last_seen_at at most once a minute", async () => {
    const at = new Date();
    const claims = await signIn(at);
    const seen = async () =>
      (await db.consoleSession.findUniqueOrThrow({ where: { id: claims.sessionId } })).lastSeenAt.getTime();
    await checkSession(db, claims, new Date(at.getTime() + 30_000));
    expect(await seen()).toBe(at.getTime());
    await checkSession(db, claims, new Date(at.getTime() + 61_000));
    expect(await seen()).toBe(at.getTime() + 61_000);
  });

  it("an unknown session id, or a row presented with another user's id, does not stand", async () => {
    const claims = await signIn();
    expect((await checkSession(db, { ...claims, sessionId: "ses_unknown" })).standing).toBe("unknown");
    expect((await checkSession(db, { ...claims, userId: "usr_other" })).standing).toBe("unknown");
  });

  it("pruning deletes the rows past their expiry before the cut-off and keeps the rest", async () => {
    const old = await signIn(new Date(Date.now() - 40 * 24 * 3_600_000));
    const current = await signIn();
    const deleted = await pruneConsoleSessions(db, new Date(Date.now() - 30 * 24 * 3_600_000));
    expect(deleted).toBe(1);
    expect(await db.consoleSession.findUnique({ where: { id: old.sessionId } })).toBeNull();
    expect((await checkSession(db, current)).standing).toBe("valid");
  });
});
