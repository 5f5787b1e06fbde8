import { describe, expect, it } from "vitest";
import {
  authenticateApiToken,
  issueApiToken,
  listApiTokens,
  revokeApiToken,
  rotateApiToken,
} from "@/lib/stores/api-tokens";
import { isAppError } from "@/lib/core/errors";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const db = useTestDatabase();
const admin = { identity: "system:test", kind: "system" } as const;
const scopes = { workflows: ["agent-task"], tools: ["crm.add_note"], take_over_leases: true };

describe("agent tokens", () => {
  it("carries its scopes into the principal, lists without the secret, and records last use at most once a minute", async () => {
    const identity = "spiffe://verity.local/agent/scoped";
    const { token, id } = await issueApiToken(db, { name: "scoped", identity, scopes }, admin);
    const principal = await authenticateApiToken(db, token);
    expect(principal).toMatchObject({ kind: "agent", identity, role: "agent", scopes });
    const first = (await db.apiToken.findUniqueOrThrow({ where: { id } })).lastUsedAt;
    expect(first).not.toBeNull();
    await authenticateApiToken(db, token);
    expect((await db.apiToken.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(first);

    const [listed] = await listApiTokens(db, identity);
    expect(listed).toMatchObject({ id, prefix: token.slice(0, 8), scopes, revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(token);
    const issued = await db.auditEntry.findFirstOrThrow({ where: { subjectId: id, action: "agent.token_issued" } });
    expect(JSON.stringify(issued.details)).not.toContain(token);
  });

  it("refuses a revoked token and an expired one; revoking twice records once", async () => {
    const identity = "spiffe://verity.local/agent/short-lived";
    const revoked = await issueApiToken(db, { name: "r", identity }, admin);
    await revokeApiToken(db, revoked.id, admin);
    await revokeApiToken(db, revoked.id, admin);
    expect(await authenticateApiToken(db, revoked.token)).toBeNull();
    expect(await db.auditEntry.count({ where: { subjectId: revoked.id, action: "agent.token_revoked" } })).toBe(1);

    const expired = await issueApiToken(db, { name: "e", identity, expiresAt: new Date(Date.now() + 1_000) }, admin);
    expect(await authenticateApiToken(db, expired.token)).not.toBeNull();
    await db.apiToken.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect(await authenticateApiToken(db, expired.token)).toBeNull();
  });

  it("rotates with an overlap: both work until the old one's new expiry, and a revoked token cannot be rotated", async () => {
    const identity = "spiffe://verity.local/agent/rotating";
    const old = await issueApiToken(
      db,
      { name: "rot", identity, scopes, expiresAt: new Date(Date.now() + 30 * 86_400_000) },
      admin,
    );
    const before = Date.now();
    const rotated = await rotateApiToken(db, old.id, { overlapMs: 3_600_000 }, admin);
    expect(await authenticateApiToken(db, old.token)).not.toBeNull();
    expect((await authenticateApiToken(db, rotated.token))?.scopes).toEqual(scopes);
    const oldExpiry = rotated.previous.expiresAt!.getTime();
    expect(oldExpiry).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(oldExpiry).toBeLessThan(before + 3_700_000);
    // The new token gets the old one's lifetime from now.
    expect(rotated.view.expiresAt!.getTime()).toBeGreaterThan(before + 29 * 86_400_000);
    const entry = await db.auditEntry.findFirstOrThrow({ where: { subjectId: old.id, action: "agent.token_rotated" } });
    expect(entry.details).toMatchObject({ new_token_id: rotated.id });

    await revokeApiToken(db, rotated.id, admin);
    const refused = await rotateApiToken(db, rotated.id, { overlapMs: 1 }, admin).catch((e: unknown) => e);
    expect(isAppError(refused) && refused.code).toBe("invariant_violated");
  });
});
