import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateApiTokenWithTenant, issueApiToken, revokeApiToken } from "@/lib/stores/api-tokens";
import { setTenantStatus } from "@/lib/stores/tenants";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * The API's token lookup on PostgreSQL, where it is one prepared statement on
 * the owner's pool (the embedded database runs the same text through Prisma,
 * tests/db/api-tokens.test.ts): the token and its tenant's standing together,
 * and nothing remembered between requests, so a revocation or a suspension
 * refuses the very next lookup.
 */
describe("API token lookup on PostgreSQL", () => {
  let t: PostgresTestDatabase;
  const system = { identity: "system:test", kind: "system" } as const;

  beforeAll(async () => {
    t = await createPostgresTestDatabase({ poolSize: 2 });
  });
  afterAll(async () => {
    await t?.drop();
  });

  it("answers the principal with its tenant's status, and refuses a revoked token at the next lookup", async () => {
    const identity = "spiffe://verity.test/agent/lookup";
    const scopes = { workflows: ["agent-task"], tools: ["crm.add_note"], take_over_leases: false };
    const { token, id } = await issueApiToken(t.db, { name: "lookup", identity, scopes }, system);
    // Looked up twice in a row: the second is served by the same prepared statement.
    for (let i = 0; i < 2; i++) {
      const found = await authenticateApiTokenWithTenant(t.platformDb, token);
      expect(found).toMatchObject({
        principal: { kind: "agent", id, identity, role: "agent", tenantId: "default", scopes },
        tenantStatus: "active",
      });
    }
    await revokeApiToken(t.db, id, system);
    expect(await authenticateApiTokenWithTenant(t.platformDb, token)).toBeNull();
    expect(await authenticateApiTokenWithTenant(t.platformDb, "vrt_never_issued")).toBeNull();
  });

  it("reads a suspension at the next lookup", async () => {
    const { token } = await issueApiToken(t.db, { name: "s", identity: "spiffe://verity.test/agent/s" }, system);
    expect((await authenticateApiTokenWithTenant(t.platformDb, token))?.tenantStatus).toBe("active");
    await setTenantStatus(t.platformDb, "default", "suspended", "contract paused", system);
    try {
      expect((await authenticateApiTokenWithTenant(t.platformDb, token))?.tenantStatus).toBe("suspended");
    } finally {
      await setTenantStatus(t.platformDb, "default", "active", "resumed", system);
    }
  });
});
