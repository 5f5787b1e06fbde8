/**
 * Issue 11, passwords: a person changes their own password (the current one
 * checked under the sign-in throttle, a minimum policy, their other sessions
 * ended and this one kept), an admin resets one (a one-time password, every
 * session ended), and a one-time password must be replaced before the
 * console serves its holder. On a real PGlite.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import { checkSession } from "@/lib/adapters/auth/session-check";
import { AppError } from "@/lib/core/errors";
import { verifyPassword } from "@/lib/core/passwords";
import type { SessionClaims } from "@/lib/model/auth/session-standing";
import { usernameThrottle } from "@/lib/model/auth/sign-in-throttle";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { createUser, getPerson, linkOidcUser, readPasswordHash } from "@/lib/stores/users";
import { changeOwnPassword } from "@/lib/use-cases/people/change-own-password";
import { completeFirstAdminSetup } from "@/lib/use-cases/people/complete-first-admin-setup";
import { createPerson } from "@/lib/use-cases/people/create-person";
import { resetPersonPassword } from "@/lib/use-cases/people/reset-person-password";
import { issueSetupLink } from "@/lib/use-cases/people/issue-setup-link";
import { openTestPglite } from "@/tests/helpers/pglite";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const db = useTestDatabase();
const admin = { identity: "spiffe://verity.local/user/root", kind: "user" as const };
const actorOf = (username: string) => ({ identity: `spiffe://verity.local/user/${username}`, kind: "user" as const });

beforeAll(async () => {
  await createUser(db, { username: "root", displayName: "Root", role: "admin", password: "root-password-1" });
});

async function signIn(username: string, password: string): Promise<SessionClaims> {
  const result = await signInWithPassword(db, { username, password, address: null });
  if (result.kind !== "signed_in") throw new Error(`sign-in of ${username}: ${result.kind}`);
  return { sessionId: result.sessionId, userId: result.principal.id };
}

async function entries(action: string) {
  return (await listAuditEntries(db, {}, { limit: 1000 })).items.filter((e) => e.action === action);
}

async function refusal(work: Promise<unknown>): Promise<AppError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

const change = (current: string, next: string, confirm = next) => ({
  current_password: current,
  new_password: next,
  confirm_password: confirm,
});

describe("changing your own password", () => {
  it("writes the new hash, ends every other session of the person and keeps this one; audited without a secret", async () => {
    const { id } = await createUser(db, {
      username: "ada",
      displayName: "Ada",
      role: "operator",
      password: "ada-old-password",
    });
    const laptop = await signIn("ada", "ada-old-password");
    const phone = await signIn("ada", "ada-old-password");
    const before = (await getPerson(db, { id }))!;

    const { person, sessionsEnded } = await changeOwnPassword(
      db,
      { userId: id, sessionId: laptop.sessionId, change: change("ada-old-password", "a much better passphrase") },
      actorOf("ada"),
    );

    expect(sessionsEnded).toBe(1);
    expect(person.sessionVersion).toBe(before.sessionVersion + 1);
    expect(await checkSession(db, laptop)).toMatchObject({ standing: "valid", passwordMustChange: false });
    expect((await checkSession(db, phone)).standing).toBe("ended");
    expect(await db.consoleSession.findUniqueOrThrow({ where: { id: phone.sessionId } })).toMatchObject({
      endedReason: "password_changed",
    });
    expect(await verifyPassword("a much better passphrase", (await readPasswordHash(db, id))!)).toBe(true);
    expect((await signInWithPassword(db, { username: "ada", password: "ada-old-password", address: null })).kind).toBe(
      "invalid",
    );
    await signIn("ada", "a much better passphrase");

    const [entry, ...more] = await entries("user.password_changed");
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      actor: "spiffe://verity.local/user/ada",
      subjectId: id,
      details: {
        username: "ada",
        sessions_ended: 1,
        session_kept: laptop.sessionId,
        one_time_replaced: false,
      },
    });
    const text = JSON.stringify(entry);
    for (const secret of ["ada-old-password", "a much better passphrase", "scrypt$"])
      expect(text).not.toContain(secret);
  });

  it("refuses a wrong current password in words naming the field, changes nothing, and counts it against the sign-in throttle", async () => {
    const { id } = await createUser(db, {
      username: "bo",
      displayName: "Bo",
      role: "operator",
      password: "bo-right-password",
    });
    const session = await signIn("bo", "bo-right-password");
    const hashBefore = await readPasswordHash(db, id);
    const attempt = () =>
      changeOwnPassword(
        db,
        { userId: id, sessionId: session.sessionId, change: change("not-bo-password", "bo new password here") },
        actorOf("bo"),
      );

    const first = await refusal(attempt());
    expect(first.code).toBe("validation_failed");
    expect(first.details.errors).toEqual([{ field: "current_password", message: "Is not your current password." }]);
    for (let i = 1; i < usernameThrottle.maxFailures; i++)
      expect((await refusal(attempt())).code).toBe("validation_failed");

    // Blocked now: not even a right current password is checked, and the sign-in page is blocked for bo too.
    const blocked = await refusal(
      changeOwnPassword(
        db,
        { userId: id, sessionId: session.sessionId, change: change("bo-right-password", "bo new password here") },
        actorOf("bo"),
      ),
    );
    expect(blocked.code).toBe("forbidden");
    expect(blocked.details.errors).toMatchObject([{ field: "current_password" }]);
    expect(blocked.message).toMatch(/too many wrong passwords for bo/);
    expect((await signInWithPassword(db, { username: "bo", password: "bo-right-password", address: null })).kind).toBe(
      "throttled",
    );
    expect(await readPasswordHash(db, id)).toBe(hashBefore);
    expect((await checkSession(db, session)).standing).toBe("valid");
    expect(await entries("user.password_changed")).not.toContainEqual(expect.objectContaining({ subjectId: id }));
    const [block] = (await entries("auth.sign_in_throttled")).filter((e) => e.subjectId === "bo");
    expect(block).toMatchObject({ details: { method: "password_change", failures: usernameThrottle.maxFailures } });
  });

  it("enforces the policy with words naming the field, before any password is checked", async () => {
    const { id } = await createUser(db, {
      username: "cy",
      displayName: "Cy",
      role: "auditor",
      password: "cy-right-password",
    });
    const session = await signIn("cy", "cy-right-password");
    const refused = async (c: ReturnType<typeof change>) =>
      (await refusal(changeOwnPassword(db, { userId: id, sessionId: session.sessionId, change: c }, actorOf("cy"))))
        .details.errors;

    expect(await refused(change("cy-right-password", "too short"))).toEqual([
      { field: "new_password", message: "At least 12 characters." },
    ]);
    expect(await refused(change("cy-right-password", "cy-right-password"))).toEqual([
      { field: "new_password", message: "Must differ from your current password." },
    ]);
    const cyLong = await createUser(db, {
      username: "cy-the-longname",
      displayName: "Cy L",
      role: "auditor",
      password: "cy-long-password",
    });
    const longSession = await signIn("cy-the-longname", "cy-long-password");
    const sameAsName = await refusal(
      changeOwnPassword(
        db,
        { userId: cyLong.id, sessionId: longSession.sessionId, change: change("cy-long-password", "CY-THE-LONGNAME") },
        actorOf("cy-the-longname"),
      ),
    );
    expect(sameAsName.details.errors).toEqual([{ field: "new_password", message: "Must not be your username." }]);
    expect(await refused(change("cy-right-password", "a long new password", "a long new passw0rd"))).toEqual([
      { field: "confirm_password", message: "Does not match the new password: type it again." },
    ]);
    expect(await refused(change("", "a long new password"))).toEqual([
      { field: "current_password", message: "Type your current password." },
    ]);
    // None of those reached the throttle: a right password still signs in, and nothing was written.
    await signIn("cy", "cy-right-password");
    expect(await entries("user.password_changed")).not.toContainEqual(expect.objectContaining({ subjectId: id }));
  });

  it("is not for a single sign-on person, who has no Verity password", async () => {
    const linked = await db.$transaction((tx) =>
      linkOidcUser(tx, { subject: "sub-dee", username: "dee", displayName: "Dee", role: "operator" }),
    );
    const person = (await getPerson(db, { id: linked!.principal.id }))!;
    expect(person.hasPassword).toBe(false);
    const error = await refusal(
      changeOwnPassword(
        db,
        { userId: person.id, sessionId: "ses_none", change: change("oidc-only", "a long new password") },
        actorOf("dee"),
      ),
    );
    expect(error.code).toBe("forbidden");
    expect(error.message).toMatch(/single sign-on/);
    expect((await refusal(resetPersonPassword(db, person.id, admin, "console"))).code).toBe("invariant_violated");
  });
});

describe("one-time passwords", () => {
  it("a person created with a generated password must replace it; one created with their own, or the first admin, need not", async () => {
    const { person, initialPassword } = await createPerson(
      db,
      { username: "eve", display_name: "Eve", role: "operator" },
      admin,
      "console",
    );
    expect(person.passwordMustChange).toBe(true);
    const session = await signIn("eve", initialPassword!);
    expect(await checkSession(db, session)).toMatchObject({ standing: "valid", passwordMustChange: true });

    await changeOwnPassword(
      db,
      { userId: person.id, sessionId: session.sessionId, change: change(initialPassword!, "eve's own passphrase") },
      actorOf("eve"),
    );
    expect(await checkSession(db, session)).toMatchObject({ standing: "valid", passwordMustChange: false });
    const [entry] = (await entries("user.password_changed")).filter((e) => e.subjectId === person.id);
    expect(entry?.details).toMatchObject({ one_time_replaced: true, sessions_ended: 0 });

    const chosen = await createPerson(
      db,
      { username: "fay", display_name: "Fay", role: "operator", password: "fay chose this one" },
      admin,
      "cli",
    );
    expect(chosen.person.passwordMustChange).toBe(false);
  });

  it("the first admin from the setup link sets their own password, so it need not change", async () => {
    const empty = await openTestPglite();
    try {
      const link = await issueSetupLink(empty.db, { identity: "system:start", kind: "system" });
      const first = await completeFirstAdminSetup(empty.db, {
        token: link.token,
        username: "rosa",
        display_name: "Rosa",
        password: "rosa's own password",
      });
      expect(first.passwordMustChange).toBe(false);
    } finally {
      await empty.close();
    }
  });

  it("an admin's reset issues one, ends all of the person's sessions and is audited without it", async () => {
    const { id } = await createUser(db, {
      username: "gus",
      displayName: "Gus",
      role: "engineer",
      password: "gus-own-password",
    });
    const a = await signIn("gus", "gus-own-password");
    const b = await signIn("gus", "gus-own-password");
    const before = (await getPerson(db, { id }))!;

    const { person, oneTimePassword, sessionsEnded } = await resetPersonPassword(db, id, admin, "console");

    expect(sessionsEnded).toBe(2);
    expect(oneTimePassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(person).toMatchObject({ passwordMustChange: true, sessionVersion: before.sessionVersion + 1 });
    expect((await checkSession(db, a)).standing).toBe("ended");
    expect((await checkSession(db, b)).standing).toBe("ended");
    expect(await db.consoleSession.findUniqueOrThrow({ where: { id: a.sessionId } })).toMatchObject({
      endedReason: "password_reset",
    });
    expect((await signInWithPassword(db, { username: "gus", password: "gus-own-password", address: null })).kind).toBe(
      "invalid",
    );
    const fresh = await signIn("gus", oneTimePassword);
    expect(await checkSession(db, fresh)).toMatchObject({ standing: "valid", passwordMustChange: true });

    const [entry] = (await entries("user.password_reset")).filter((e) => e.subjectId === id);
    expect(entry).toMatchObject({
      actor: admin.identity,
      details: { username: "gus", sessions_ended: 2, via: "console" },
    });
    expect(JSON.stringify(entry)).not.toContain(oneTimePassword);
  });

  it("an admin cannot reset their own password: they change it with their current one", async () => {
    const root = (await getPerson(db, { username: "root" }))!;
    const error = await refusal(resetPersonPassword(db, root.id, admin, "console"));
    expect(error.code).toBe("forbidden");
    expect(error.message).toMatch(/\/account/);
  });
});
