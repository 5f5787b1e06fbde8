/**
 * People (issue 11, "First start of a real deployment" and "People"), on a
 * real PGlite: the first admin from an empty non-demo database through the
 * one-time setup link, people created, re-roled, disabled and enabled (each
 * bumping session_version, each audited), and a demo database refused
 * outside the demo until its demo accounts are purged.
 */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "@/lib/core/canonical-json";
import { demoAgent, demoObserver, demoUsers } from "@/lib/config/demo-accounts";
import { demoDataWanted, isLoopbackHost } from "@/lib/config/env";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import { authenticateApiToken } from "@/lib/stores/api-tokens";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { createUser, getPerson } from "@/lib/stores/users";
import { changePersonRole } from "@/lib/use-cases/people/change-person-role";
import { completeFirstAdminSetup, isFirstAdminSetupOpen } from "@/lib/use-cases/people/complete-first-admin-setup";
import { createPerson } from "@/lib/use-cases/people/create-person";
import { disablePerson } from "@/lib/use-cases/people/disable-person";
import { enablePerson } from "@/lib/use-cases/people/enable-person";
import { SETUP_LINK_TTL_MS } from "@/lib/use-cases/people/issue-setup-link";
import { prepareAccountsAtStart, purgeCommand } from "@/lib/use-cases/people/prepare-accounts-at-start";
import { purgeDemoAccounts } from "@/lib/use-cases/people/purge-demo-accounts";
import { seedDemoData } from "@/programs/seed/seed";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const admin = { identity: "system:test", kind: "system" as const };
const signIn = (db: Parameters<typeof signInWithPassword>[0], username: string, password: string) =>
  signInWithPassword(db, { username, password, address: null });

async function actions(db: Parameters<typeof listAuditEntries>[0]): Promise<string[]> {
  return (await listAuditEntries(db, {}, { limit: 1000 })).items.map((e) => e.action);
}

describe("when a start is the demo", () => {
  it("is the quick start only: the embedded database on a loopback address, unless VERITY_DEMO_DATA says otherwise", () => {
    expect(demoDataWanted({ VERITY_HOST: "127.0.0.1" })).toBe(true);
    expect(demoDataWanted({ VERITY_HOST: "localhost" })).toBe(true);
    expect(demoDataWanted({ VERITY_HOST: "::1" })).toBe(true);
    expect(demoDataWanted({ VERITY_HOST: "0.0.0.0" })).toBe(false);
    expect(demoDataWanted({ VERITY_HOST: "10.1.2.3" })).toBe(false);
    expect(demoDataWanted({ VERITY_HOST: "127.0.0.1", DATABASE_URL: "postgresql://db/verity" })).toBe(false);
    expect(demoDataWanted({ VERITY_HOST: "127.0.0.1", VERITY_DEMO_DATA: "false" })).toBe(false);
    expect(demoDataWanted({ VERITY_HOST: "0.0.0.0", VERITY_DEMO_DATA: "true" })).toBe(true);
    expect(isLoopbackHost("[::1]")).toBe(true);
    expect(isLoopbackHost("127.1.2.3")).toBe(true);
    expect(isLoopbackHost("128.0.0.1")).toBe(false);
  });
});

describe("the first admin of an empty non-demo database", () => {
  const db = useTestDatabase();
  let link = "";

  it("a start finds no accounts and issues a one-time link, stored only as its sha256, audited without the token", async () => {
    const start = await prepareAccountsAtStart(db, new Date());
    expect(start.kind).toBe("setup");
    if (start.kind !== "setup") return;
    link = start.token;
    const rows = await db.setupToken.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(sha256Hex(link));
    expect(JSON.stringify(rows)).not.toContain(link);
    expect(rows[0]!.expiresAt.getTime() - rows[0]!.createdAt.getTime()).toBe(SETUP_LINK_TTL_MS);
    const entries = (await listAuditEntries(db, {}, { limit: 10 })).items;
    expect(entries.map((e) => e.action)).toEqual(["setup.link_issued"]);
    expect(JSON.stringify(entries)).not.toContain(link);
    expect(await isFirstAdminSetupOpen(db, link)).toBe(true);
    expect(await isFirstAdminSetupOpen(db, "vst_guessed")).toBe(false);
  });

  it("refuses bad fields naming them, and a wrong link, changing nothing", async () => {
    await expect(
      completeFirstAdminSetup(db, { token: link, username: "Root User", display_name: "", password: "short" }),
    ).rejects.toMatchObject({
      code: "validation_failed",
      details: {
        errors: expect.arrayContaining([
          expect.objectContaining({ field: "username" }),
          expect.objectContaining({ field: "display_name" }),
          expect.objectContaining({ field: "password" }),
        ]),
      },
    });
    await expect(
      completeFirstAdminSetup(db, {
        token: "vst_guessed",
        username: "root",
        display_name: "Root",
        password: "a long enough password",
      }),
    ).rejects.toMatchObject({ code: "forbidden" });
    expect(await db.user.count()).toBe(0);
  });

  it("creates the admin, who can sign in; the link is used up and a second use is refused", async () => {
    const person = await completeFirstAdminSetup(db, {
      token: link,
      username: "Rosa",
      display_name: "Rosa Root",
      password: "a long enough password",
    });
    expect(person).toMatchObject({ username: "rosa", role: "admin", displayName: "Rosa Root", disabledAt: null });
    expect(await signIn(db, "rosa", "a long enough password")).toMatchObject({ kind: "signed_in" });
    const token = await db.setupToken.findFirstOrThrow();
    expect(token.usedAt).not.toBeNull();
    expect(token.usedBy).toBe("spiffe://verity.local/user/rosa");
    expect(await isFirstAdminSetupOpen(db, link)).toBe(false);
    await expect(
      completeFirstAdminSetup(db, {
        token: link,
        username: "mallory",
        display_name: "M",
        password: "a long enough password",
      }),
    ).rejects.toMatchObject({ code: "invariant_violated" });
    expect(await db.user.count()).toBe(1);
    const created = (await listAuditEntries(db, {}, { limit: 10 })).items.find((e) => e.action === "user.created");
    expect(created).toMatchObject({
      actor: "spiffe://verity.local/user/rosa",
      details: { username: "rosa", role: "admin", via: "setup_link", setup_token_id: token.id },
    });
    // With an account, a start is simply ready: no new link.
    expect(await prepareAccountsAtStart(db)).toEqual({ kind: "ready", people: 1 });
    expect(await db.setupToken.count()).toBe(1);
  });
});

describe("an expired setup link", () => {
  const db = useTestDatabase();
  it("opens nothing and creates nothing", async () => {
    const issuedAt = new Date(Date.now() - SETUP_LINK_TTL_MS - 1_000);
    const start = await prepareAccountsAtStart(db, issuedAt);
    if (start.kind !== "setup") throw new Error(`expected a setup link, got ${start.kind}`);
    expect(await isFirstAdminSetupOpen(db, start.token)).toBe(false);
    await expect(
      completeFirstAdminSetup(db, {
        token: start.token,
        username: "late",
        display_name: "Late",
        password: "a long enough password",
      }),
    ).rejects.toMatchObject({ code: "forbidden", message: expect.stringContaining("expired") });
    expect(await db.user.count()).toBe(0);
  });
});

describe("people: create, change role, disable, enable", () => {
  const db = useTestDatabase();

  it("a created person can sign in with the initial password shown once; a taken username is refused by field", async () => {
    const { person, initialPassword } = await createPerson(
      db,
      { username: "olga", display_name: "Olga Operator", role: "operator" },
      admin,
      "console",
    );
    expect(initialPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(await signIn(db, "olga", initialPassword!)).toMatchObject({
      kind: "signed_in",
      principal: { id: person.id, role: "operator" },
    });
    await expect(
      createPerson(db, { username: "OLGA", display_name: "Twin", role: "auditor" }, admin, "console"),
    ).rejects.toMatchObject({ code: "validation_failed", details: { errors: [{ field: "username" }] } });
    const chosen = await createPerson(
      db,
      { username: "adam", display_name: "Adam Admin", role: "admin", password: "adam's own passphrase" },
      admin,
      "cli",
    );
    expect(chosen.initialPassword).toBeNull();
    expect(await signIn(db, "adam", "adam's own passphrase")).toMatchObject({ kind: "signed_in" });
  });

  it("a role change and a disable bump session_version; a disabled person cannot sign in until enabled", async () => {
    const olga = (await getPerson(db, { username: "olga" }))!;
    const v = olga.sessionVersion;
    const promoted = await changePersonRole(db, olga.id, "engineer", admin);
    expect(promoted).toMatchObject({ role: "engineer", sessionVersion: v + 1 });
    await expect(changePersonRole(db, olga.id, "engineer", admin)).rejects.toMatchObject({ code: "version_conflict" });

    const disabled = await disablePerson(db, olga.id, admin);
    expect(disabled.sessionVersion).toBe(v + 2);
    expect(disabled.disabledAt).not.toBeNull();
    const row = await db.user.findUniqueOrThrow({ where: { id: olga.id } });
    // The password still matches; the account does not let it in.
    expect(await signIn(db, "olga", "wrong")).toMatchObject({ kind: "invalid" });
    await expect(disablePerson(db, olga.id, admin)).rejects.toMatchObject({ code: "version_conflict" });
    expect(row.sessionVersion).toBe(v + 2);

    const enabled = await enablePerson(db, olga.id, admin);
    expect(enabled).toMatchObject({ disabledAt: null, sessionVersion: v + 3 });
    const audited = await actions(db);
    expect(audited.filter((a) => a.startsWith("user."))).toEqual([
      "user.created",
      "user.created",
      "user.role_changed",
      "user.disabled",
      "user.enabled",
    ]);
  });

  it("keeps an enabled admin: the only one can be neither disabled nor demoted", async () => {
    const adam = (await getPerson(db, { username: "adam" }))!;
    await expect(disablePerson(db, adam.id, admin)).rejects.toMatchObject({
      code: "invariant_violated",
      details: { violations: [{ invariant: "an_enabled_admin_remains" }] },
    });
    await expect(changePersonRole(db, adam.id, "auditor", admin)).rejects.toMatchObject({ code: "invariant_violated" });
    const olga = (await getPerson(db, { username: "olga" }))!;
    await changePersonRole(db, olga.id, "admin", admin);
    expect((await disablePerson(db, adam.id, admin)).disabledAt).not.toBeNull();
  });
});

describe("a demo database started outside the demo", () => {
  const db = useTestDatabase();

  it("is refused, naming the demo accounts and the purge; after the purge the demo logins and tokens are dead", async () => {
    await seedDemoData(db);
    // A real person who happens to be called like a demo account, with their own password, is not one.
    await createUser(db, { username: "ada", displayName: "Ada", role: "auditor", password: "ada's own passphrase" });
    const start = await prepareAccountsAtStart(db);
    expect(start.kind).toBe("refused");
    if (start.kind !== "refused") return;
    for (const u of demoUsers) expect(start.message).toContain(`user ${u.username}`);
    expect(start.message).toContain(`token ${demoAgent.name}`);
    expect(start.message).toContain(purgeCommand);
    // Refusing writes nothing: no setup link, no entry.
    expect(await db.setupToken.count()).toBe(0);

    const purged = await purgeDemoAccounts(db, admin);
    expect(purged.users.map((u) => u.username).sort()).toEqual(demoUsers.map((u) => u.username).sort());
    // Two of them (each sign-in is a deliberately slow scrypt): the rows are gone, so every one fails alike.
    for (const u of demoUsers.slice(0, 2))
      expect(await signIn(db, u.username, u.password)).toMatchObject({ kind: "invalid" });
    expect(await db.user.count({ where: { username: { in: demoUsers.map((u) => u.username) } } })).toBe(0);
    expect(await authenticateApiToken(db, demoAgent.token)).toBeNull();
    expect(await authenticateApiToken(db, demoObserver.token)).toBeNull();
    expect(await signIn(db, "ada", "ada's own passphrase")).toMatchObject({ kind: "signed_in" });
    expect(await actions(db)).toContain("demo.purged");
    // The demo tasks stay; the start now serves the real person.
    expect(await db.task.count()).toBeGreaterThan(0);
    expect(await prepareAccountsAtStart(db)).toEqual({ kind: "ready", people: 1 });
    // A second purge finds nothing and records nothing.
    const before = (await actions(db)).length;
    expect(await purgeDemoAccounts(db, admin)).toEqual({ users: [], tokens: [] });
    expect((await actions(db)).length).toBe(before);
  }, 300_000);
});
