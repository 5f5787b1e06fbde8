import { beforeAll, describe, expect, it } from "vitest";
import { signInWithOidc } from "@/lib/adapters/auth/audit-trail";
import { oidcIdentityOf } from "@/lib/adapters/auth/oidc";
import { checkSession } from "@/lib/adapters/auth/session-check";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { createUser } from "@/lib/stores/users";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Single sign-on's linking: a person signing in through the OIDC provider
 * gets (or is linked to) a users row by oidc_subject, with the role the
 * configured claim maps to. The browser flow against a real provider is not
 * covered here.
 */
const db = useTestDatabase();
const issuer = "https://idp.example";

beforeAll(async () => {
  // Read once by getEnv, at first use (after this).
  process.env.VERITY_OIDC_ISSUER = issuer;
  process.env.VERITY_OIDC_CLIENT_ID = "verity";
  process.env.VERITY_OIDC_CLIENT_SECRET = "a-client-secret";
  process.env.VERITY_OIDC_ROLE_MAP = "verity-admins=admin,verity-ops=operator";
  await createUser(db, { username: "grace", displayName: "Grace (password)", role: "auditor", password: "pw" });
});

const claims = (groups: string[]) => ({ sub: "abc-123", preferred_username: "grace", name: "Grace Hopper", groups });

describe("single sign-on", () => {
  it("creates a person with the mapped role, never taking over a password account by its name", async () => {
    const identity = oidcIdentityOf(claims(["staff", "verity-ops"]));
    expect(identity).toEqual({
      subject: `${issuer}#abc-123`,
      username: "grace",
      displayName: "Grace Hopper",
      role: "operator",
    });
    const signedIn = await signInWithOidc(db, identity!);
    expect(signedIn?.principal).toMatchObject({ role: "operator", identity: "spiffe://verity.local/user/grace-2" });
    const row = await db.user.findUniqueOrThrow({ where: { id: signedIn!.principal.id } });
    expect(row).toMatchObject({ username: "grace-2", oidcSubject: `${issuer}#abc-123` });
    const entry = (await listAuditEntries(db, {}, { limit: 100 })).items.find((e) => e.subjectId === row.id);
    expect(entry).toMatchObject({ action: "auth.signed_in", details: { method: "oidc", account_created: true } });
  });

  it("links the same subject again, applying a changed role and ending the older sessions", async () => {
    const first = await signInWithOidc(db, oidcIdentityOf(claims(["verity-ops"]))!);
    const before = { sessionId: first!.sessionId, userId: first!.principal.id };
    const promoted = await signInWithOidc(db, oidcIdentityOf(claims(["verity-ops", "verity-admins"]))!);
    expect(promoted?.principal).toMatchObject({ id: first!.principal.id, role: "admin" });
    expect((await checkSession(db, before)).standing).toBe("ended");
    const after = { sessionId: promoted!.sessionId, userId: promoted!.principal.id };
    expect(await checkSession(db, after)).toMatchObject({ standing: "valid", principal: { role: "admin" } });
    // The same role again is not a change: the session just opened stays.
    await signInWithOidc(db, oidcIdentityOf(claims(["verity-ops", "verity-admins"]))!);
    expect((await checkSession(db, after)).standing).toBe("valid");
    expect(await db.user.count({ where: { oidcSubject: `${issuer}#abc-123` } })).toBe(1);
  });

  it("refuses a person whose claim maps to no role, and a disabled person", async () => {
    expect(oidcIdentityOf(claims(["staff"]))).toBeNull();
    await db.user.updateMany({ where: { oidcSubject: `${issuer}#abc-123` }, data: { disabledAt: new Date() } });
    expect(await signInWithOidc(db, oidcIdentityOf(claims(["verity-ops"]))!)).toBeNull();
  });
});
