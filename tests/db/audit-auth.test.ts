import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { requirePermissionRecorded, signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import type { Principal } from "@/lib/model/permissions";
import type { Db } from "@/lib/db/client";
import { listAuditEntries, verifyAuditChains } from "@/lib/stores/audit-log";
import { createUser } from "@/lib/stores/users";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

let t: TestDatabase;
let db: Db;
let ada: Principal;
beforeAll(async () => {
  t = await openTestPglite();
  db = t.db;
  ada = await createUser(db, {
    username: "ada",
    displayName: "Ada",
    role: "auditor",
    password: "correct horse battery",
  });
});
afterAll(async () => t.close());

async function authEntries() {
  return (await listAuditEntries(db, {}, { limit: 1000 })).items.filter((e) => e.stream === "auth");
}

describe("sign-ins in the audit log", () => {
  it("records a success, and failures only as the one entry of a block, never the password", async () => {
    const signIn = (username: string, password: string) =>
      signInWithPassword(db, { username, password, address: null });
    expect(await signIn("ada", "correct horse battery")).toMatchObject({
      kind: "signed_in",
      principal: { id: ada.id },
    });
    expect(await signIn("ada", "wrong horse")).toEqual({ kind: "invalid" });
    expect(await signIn("nobody", "guess")).toEqual({ kind: "invalid" });
    // Single failures leave no entry: anyone can send them, each would be a hash-chained row.
    expect((await authEntries()).map((e) => e.action)).toEqual(["auth.signed_in"]);
    for (let i = 0; i < 4; i++) await signIn("nobody", "guess");
    const entries = await authEntries();
    expect(entries.map((e) => [e.action, e.actor, e.subjectId])).toEqual([
      ["auth.signed_in", "spiffe://verity.local/user/ada", ada.id],
      ["auth.sign_in_throttled", "anonymous", "nobody"],
    ]);
    expect(entries[1]!.details).toMatchObject({ scope: "username", username: "nobody", failures: 5 });
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    const everything = JSON.stringify(await t.sql("SELECT * FROM audit_entries"));
    for (const secret of ["correct horse battery", "wrong horse", "guess"]) expect(everything).not.toContain(secret);
    expect((await verifyAuditChains(db)).ok).toBe(true);
  });
});

describe("denied permissions in the audit log", () => {
  const agent: Principal = {
    kind: "agent",
    id: "tok_1",
    identity: "spiffe://verity.local/agent/refund-bot",
    role: "agent",
    displayName: "refund-bot",
    tenantId: "default",
  };

  it("records a refusal before throwing it, and nothing for an allowed call or an anonymous one", async () => {
    const before = (await authEntries()).length;
    await expect(
      requirePermissionRecorded(db, agent, "audit:export", "GET /api/v1/audit/export"),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(requirePermissionRecorded(db, agent, "tasks:read", "GET /api/v1/tasks")).resolves.toBe(agent);
    await expect(requirePermissionRecorded(db, null, "tasks:read", "GET /api/v1/tasks")).rejects.toMatchObject({
      code: "unauthenticated",
    });
    const entries = (await authEntries()).slice(before);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: "auth.denied",
      actor: agent.identity,
      actorKind: "agent",
      subjectType: "permission",
      subjectId: "audit:export",
      details: { principal_id: "tok_1", role: "agent", where: "GET /api/v1/audit/export" },
    });
  });

  it("still refuses when the refusal cannot be recorded", async () => {
    const broken = await openTestPglite();
    // An audit table the insert cannot reach: the write fails at once, like an outage would.
    await broken.sql("ALTER TABLE audit_entries RENAME TO audit_entries_gone");
    // The logger (lib/config/log.ts) writes error records to stderr.
    const logged = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      await expect(
        requirePermissionRecorded(broken.db, agent, "audit:export", "GET /api/v1/audit/export"),
      ).rejects.toMatchObject({ code: "forbidden" });
      expect(logged).toHaveBeenCalledWith(expect.stringContaining("could not record a denied permission"));
    } finally {
      logged.mockRestore();
      await broken.close();
    }
  });
});
