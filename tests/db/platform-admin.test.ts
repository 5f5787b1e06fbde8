import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { can, type Principal } from "@/lib/model/permissions";
import { navLinksFor } from "@/lib/adapters/console/shared/nav";
import { findTenant, listTenants } from "@/lib/stores/tenants";
import { countPeopleByTenant, createUser, listPeople, verifyUserCredentials } from "@/lib/stores/users";
import { completeFirstAdminSetup } from "@/lib/use-cases/people/complete-first-admin-setup";
import { issueSetupLink } from "@/lib/use-cases/people/issue-setup-link";
import { changePersonRole } from "@/lib/use-cases/people/change-person-role";
import { changeTenantStatus } from "@/lib/use-cases/tenants/change-tenant-status";
import { onboardTenant } from "@/lib/use-cases/tenants/onboard-tenant";
import { setPlatformAdmin } from "@/lib/use-cases/tenants/set-platform-admin";
import { readConsoleSession, openConsoleSession } from "@/lib/stores/console-sessions";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * Platform admins on a real (embedded) database: onboarding a tenant with its
 * first admin, bad input changing nothing, the flag granted only by the
 * platform's command and read afresh with every session, suspension refused
 * for the caller's own tenant, and a tenant admin's people management unable
 * to reach another tenant or the flag.
 */
let t: TestDatabase;
const system = { identity: "system:test", kind: "system" } as const;
let platformAdmin: Principal;

beforeAll(async () => {
  t = await openTestPglite();
  // The first admin of the `default` tenant's setup link is the deployment's platform admin; nobody created later is.
  const link = await issueSetupLink(t.db, system);
  const first = await completeFirstAdminSetup(t.db, {
    token: link.token,
    username: "root-admin",
    display_name: "Root Admin",
    password: "a long enough password",
  });
  const signedIn = await verifyUserCredentials(t.db, first.username, "a long enough password");
  platformAdmin = signedIn!.principal;
  const later = await createUser(t.db, {
    username: "later-admin",
    displayName: "Later Admin",
    role: "admin",
    password: "a long enough password",
  });
  expect(later.platformAdmin).toBe(false);
});
afterAll(async () => {
  await t?.close();
});

const auditActions = async (tenantId: string, prefix: string) =>
  (
    await t
      .forTenant(tenantId)
      .auditEntry.findMany({ where: { action: { startsWith: prefix } }, orderBy: { at: "asc" } })
  ).map((e) => e.action);

describe("platform admins", () => {
  it("tenants:manage is the flag's, never a role's: an admin without it has no Tenants link", () => {
    expect(platformAdmin.platformAdmin).toBe(true);
    expect(can(platformAdmin, "tenants:manage")).toBe(true);
    for (const role of ["operator", "auditor", "engineer", "admin", "agent"] as const) {
      expect(can({ role }, "tenants:manage")).toBe(false);
      expect(navLinksFor({ role }).map((l) => l.href)).not.toContain("/platform/tenants");
    }
    expect(navLinksFor(platformAdmin).map((l) => l.href)).toContain("/platform/tenants");
  });

  it("onboards a tenant with its first admin, whose initial password must be replaced; the admin belongs to that tenant only", async () => {
    const result = await onboardTenant(
      t,
      { id: "acme", name: "Acme Corp", admin: { username: "acme-admin", display_name: "Acme Admin" } },
      platformAdmin,
    );
    expect(result.tenant).toMatchObject({ id: "acme", name: "Acme Corp", status: "active" });
    expect(result.initialPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(result.resumed).toBe(false);
    const acmePeople = await listPeople(t.forTenant("acme"));
    expect(acmePeople.map((p) => [p.username, p.role, p.passwordMustChange])).toEqual([["acme-admin", "admin", true]]);
    // The default tenant's client does not see acme's admin, and acme's sees only its own.
    expect((await listPeople(t.db)).map((p) => p.username)).toEqual(["later-admin", "root-admin"]);
    expect((await countPeopleByTenant(t.platformDb)).get("acme")).toBe(1);
    expect(await auditActions("acme", "tenant.")).toEqual(["tenant.created"]);
    expect(await auditActions("acme", "user.")).toEqual(["user.created"]);
    // The built-in workflows are the new tenant's too.
    expect(await t.forTenant("acme").workflowVersion.count()).toBeGreaterThan(0);
  });

  it("bad input is refused naming the field, and nothing is written", async () => {
    const before = await listTenants(t.platformDb);
    const cases: Array<[Parameters<typeof onboardTenant>[1], RegExp]> = [
      [{ id: "Bad Id!", name: "X", admin: { username: "x-admin", display_name: "X" } }, /tenant id/i],
      [{ id: "beta", name: "", admin: { username: "beta-admin", display_name: "B" } }, /name/],
      [{ id: "beta", name: "Beta", admin: { username: "Not a name!", display_name: "B" } }, /username/],
      [{ id: "beta", name: "Beta", admin: { username: "beta-admin", display_name: "" } }, /display_name/],
      // A login name is unique across tenants: refused before the tenant is created.
      [{ id: "beta", name: "Beta", admin: { username: "root-admin", display_name: "B" } }, /"root-admin" is taken/],
      [{ id: "acme", name: "Acme again", admin: { username: "acme-two", display_name: "A" } }, /exists already/],
    ];
    for (const [input, words] of cases) {
      await expect(onboardTenant(t, input, platformAdmin)).rejects.toMatchObject({
        code: "validation_failed",
        message: expect.stringMatching(words),
      });
    }
    expect(await listTenants(t.platformDb)).toEqual(before);
    expect(await findTenant(t.platformDb, "beta")).toBeNull();
    expect((await countPeopleByTenant(t.platformDb)).get("acme")).toBe(1);
  });

  it("a tenant left without its first admin is completed by onboarding it again with the same id", async () => {
    const { openTenant } = await import("@/lib/use-cases/tenants/open-tenant");
    await openTenant(t, { id: "gamma", name: "Gamma" }, system);
    const resumed = await onboardTenant(
      t,
      { id: "gamma", name: "Gamma", admin: { username: "gamma-admin", display_name: "Gamma Admin" } },
      platformAdmin,
    );
    expect(resumed.resumed).toBe(true);
    expect((await listPeople(t.forTenant("gamma"))).map((p) => p.username)).toEqual(["gamma-admin"]);
  });

  it("suspends and reactivates another tenant with a reason, never its own, and never without a reason", async () => {
    await expect(
      changeTenantStatus(t.platformDb, { tenantId: "acme", status: "suspended", reason: "  " }, platformAdmin),
    ).rejects.toMatchObject({ code: "validation_failed" });
    await expect(
      changeTenantStatus(t.platformDb, { tenantId: "default", status: "suspended", reason: "oops" }, platformAdmin),
    ).rejects.toMatchObject({
      code: "invariant_violated",
      message: expect.stringMatching(/your own tenant \(default\)/),
    });
    expect((await findTenant(t.platformDb, "default"))?.status).toBe("active");
    await expect(
      changeTenantStatus(t.platformDb, { tenantId: "nope", status: "suspended", reason: "x" }, platformAdmin),
    ).rejects.toMatchObject({ code: "not_found" });

    const suspended = await changeTenantStatus(
      t.platformDb,
      { tenantId: "acme", status: "suspended", reason: "contract paused" },
      platformAdmin,
    );
    expect(suspended.status).toBe("suspended");
    const active = await changeTenantStatus(
      t.platformDb,
      { tenantId: "acme", status: "active", reason: "contract resumed" },
      platformAdmin,
    );
    expect(active.status).toBe("active");
    const entries = await t.forTenant("acme").auditEntry.findMany({
      where: { action: { startsWith: "tenant." } },
      orderBy: { at: "asc" },
    });
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ["tenant.created", platformAdmin.identity],
      ["tenant.suspended", platformAdmin.identity],
      ["tenant.reactivated", platformAdmin.identity],
    ]);
  });

  it("the flag is granted and withdrawn only by the platform's command, audited in the person's tenant, and read afresh by every session", async () => {
    const acmeDb = t.forTenant("acme");
    const [acmeAdmin] = await listPeople(acmeDb);
    // A tenant admin's people management cannot reach another tenant's person (row-level security) …
    await expect(
      changePersonRole(t.db, acmeAdmin!.id, "operator", { identity: platformAdmin.identity, kind: "user" }),
    ).rejects.toMatchObject({ code: "not_found" });

    const session = await acmeDb.$transaction((tx) =>
      openConsoleSession(tx, {
        userId: acmeAdmin!.id,
        method: "password",
        checkedSessionVersion: acmeAdmin!.sessionVersion,
        maxAgeMs: 3_600_000,
      }),
    );
    expect((await readConsoleSession(acmeDb, session!.id))?.principal.platformAdmin).toBe(false);

    expect(await setPlatformAdmin(t.platformDb, "acme-admin", true, system)).toEqual({
      username: "acme-admin",
      tenantId: "acme",
      changed: true,
    });
    expect((await readConsoleSession(acmeDb, session!.id))?.principal.platformAdmin).toBe(true);
    expect((await setPlatformAdmin(t.platformDb, "acme-admin", true, system)).changed).toBe(false);
    await setPlatformAdmin(t.platformDb, "acme-admin", false, system);
    expect((await readConsoleSession(acmeDb, session!.id))?.principal.platformAdmin).toBe(false);
    expect(await auditActions("acme", "user.platform_admin")).toEqual([
      "user.platform_admin_granted",
      "user.platform_admin_revoked",
    ]);
    // … nor does the person's role change touch the flag.
    expect(await auditActions("default", "user.platform_admin")).toEqual([]);
    await expect(setPlatformAdmin(t.platformDb, "nobody", true, system)).rejects.toMatchObject({ code: "not_found" });
  });
});
