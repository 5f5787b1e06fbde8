/**
 * The agent use cases the console's /admin/agents and the CLI share
 * (lib/use-cases/agents/), on a real PGlite: an agent created only with
 * registered scopes, listed with its tokens' states and never a secret,
 * revoked once however often asked, rotated within the overlap bound.
 */
import { describe, expect, it } from "vitest";
import { isAppError } from "@/lib/core/errors";
import { authenticateApiToken } from "@/lib/stores/api-tokens";
import { createAgent } from "@/lib/use-cases/agents/create-agent";
import { listAgents, tokenStateOf } from "@/lib/use-cases/agents/list-agents";
import { revokeAgentToken } from "@/lib/use-cases/agents/revoke-agent-token";
import { MAX_ROTATION_OVERLAP_SECONDS, rotateAgentToken } from "@/lib/use-cases/agents/rotate-agent-token";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

const db = useTestDatabase();
const admin = { identity: "spiffe://verity.local/user/admin", kind: "user" } as const;
const scopes = { workflows: ["agent-task"], tools: ["crm.add_note"], take_over_leases: false };

async function refusal(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isAppError(error)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

describe("createAgent", () => {
  it("refuses a workflow or tool this server does not have, naming the field, and writes nothing", async () => {
    const error = await refusal(
      createAgent(
        db,
        {
          name: "typo-bot",
          scopes: { workflows: ["agent_task"], tools: ["payments.refnd"], take_over_leases: false },
          expires_at: null,
        },
        admin,
      ),
    );
    expect(error.code).toBe("validation_failed");
    expect(error.details.errors).toEqual([
      { field: "scopes.workflows", message: expect.stringContaining("agent_task is not a registered workflow") },
      { field: "scopes.tools", message: expect.stringContaining("payments.refnd is not a registered tool") },
    ]);
    expect(await db.apiToken.count({ where: { name: "typo-bot" } })).toBe(0);
  });

  it("takes every name ('*') and the registered ones", async () => {
    const { token } = await createAgent(
      db,
      {
        name: "wide-bot",
        scopes: { workflows: "*", tools: ["payments.refund"], take_over_leases: true },
        expires_at: null,
      },
      admin,
    );
    expect((await authenticateApiToken(db, token))?.scopes).toEqual({
      workflows: "*",
      tools: ["payments.refund"],
      take_over_leases: true,
    });
  });
});

describe("listAgents", () => {
  it("lists each identity with its tokens newest first, their states, and never a secret", async () => {
    const created = await createAgent(
      db,
      { name: "list-bot", scopes, expires_at: new Date(Date.now() + 86_400_000) },
      admin,
    );
    const rotated = await rotateAgentToken(db, { token_id: created.view.id, overlap_seconds: 60 }, admin);

    const now = new Date();
    const agent = (await listAgents(db, now)).find((a) => a.name === "list-bot");
    expect(agent).toMatchObject({ identity: "spiffe://verity.local/agent/list-bot", role: "agent", liveTokens: 2 });
    expect(agent?.tokens.map((t) => [t.id, t.state])).toEqual([
      [rotated.view.id, "live"],
      [created.view.id, "live"],
    ]);
    expect(agent?.tokens[1]?.expiresAt?.getTime()).toBe(rotated.previous.expiresAt?.getTime());
    const listed = JSON.stringify(await listAgents(db));
    expect(listed).not.toContain(created.token);
    expect(listed).not.toContain(rotated.token);

    // After the overlap the old token reads as expired; a revoked one as revoked.
    const later = new Date(now.getTime() + 61_000);
    const [newer, older] = (await listAgents(db, later)).find((a) => a.name === "list-bot")!.tokens;
    expect(older?.state).toBe("expired");
    await revokeAgentToken(db, { token_id: newer!.id }, admin);
    const afterRevoke = (await listAgents(db, later)).find((a) => a.name === "list-bot")!;
    expect(afterRevoke.tokens.map((t) => t.state)).toEqual(["revoked", "expired"]);
    expect(afterRevoke.liveTokens).toBe(0);
  });

  it("says revoked before expired: a revoked token stays revoked after its expiry", () => {
    const past = new Date(Date.now() - 1000);
    expect(tokenStateOf({ revokedAt: past, expiresAt: past }, new Date())).toBe("revoked");
    expect(tokenStateOf({ revokedAt: null, expiresAt: past }, new Date())).toBe("expired");
    expect(tokenStateOf({ revokedAt: null, expiresAt: null }, new Date())).toBe("live");
  });
});

describe("revokeAgentToken", () => {
  it("refuses the token from the next request, and tells a second revocation from the first, recording one", async () => {
    const { token, view } = await createAgent(db, { name: "revoke-bot", scopes, expires_at: null }, admin);
    const first = await revokeAgentToken(db, { token_id: view.id }, admin);
    expect(first.alreadyRevoked).toBe(false);
    expect(await authenticateApiToken(db, token)).toBeNull();
    const second = await revokeAgentToken(db, { token_id: view.id }, admin);
    expect(second.alreadyRevoked).toBe(true);
    expect(second.token.revokedAt).toEqual(first.token.revokedAt);
    expect(await db.auditEntry.count({ where: { subjectId: view.id, action: "agent.token_revoked" } })).toBe(1);
    const entry = await db.auditEntry.findFirstOrThrow({
      where: { subjectId: view.id, action: "agent.token_revoked" },
    });
    expect(entry.actor).toBe(admin.identity);
  });

  it("answers an unknown or empty id as such", async () => {
    expect((await refusal(revokeAgentToken(db, { token_id: "tok_nope" }, admin))).code).toBe("not_found");
    const empty = await refusal(revokeAgentToken(db, { token_id: " " }, admin));
    expect(empty.code).toBe("validation_failed");
    expect(empty.details.errors).toMatchObject([{ field: "token_id" }]);
  });
});

describe("rotateAgentToken", () => {
  it("keeps both tokens working for the overlap, then only the new one", async () => {
    const { token: oldToken, view } = await createAgent(db, { name: "rotate-bot", scopes, expires_at: null }, admin);
    const before = Date.now();
    const rotated = await rotateAgentToken(db, { token_id: view.id, overlap_seconds: 3600 }, admin);
    expect(await authenticateApiToken(db, oldToken)).not.toBeNull();
    expect((await authenticateApiToken(db, rotated.token))?.scopes).toEqual(scopes);
    expect(rotated.previous.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(rotated.view.expiresAt).toBeNull();

    const once = await rotateAgentToken(db, { token_id: rotated.view.id, overlap_seconds: 0 }, admin);
    expect(await authenticateApiToken(db, rotated.token)).toBeNull();
    expect(await authenticateApiToken(db, once.token)).not.toBeNull();
    expect(await db.auditEntry.count({ where: { action: "agent.token_rotated", subjectId: view.id } })).toBe(1);
  });

  it("refuses an overlap beyond the bound naming the field, and a token that is no longer live", async () => {
    const { view } = await createAgent(db, { name: "bound-bot", scopes, expires_at: null }, admin);
    const tooLong = await refusal(
      rotateAgentToken(db, { token_id: view.id, overlap_seconds: MAX_ROTATION_OVERLAP_SECONDS + 1 }, admin),
    );
    expect(tooLong.code).toBe("validation_failed");
    expect(tooLong.details.errors).toMatchObject([{ field: "overlap_seconds" }]);
    expect(await db.apiToken.count({ where: { identity: view.identity } })).toBe(1);

    await revokeAgentToken(db, { token_id: view.id }, admin);
    expect((await refusal(rotateAgentToken(db, { token_id: view.id, overlap_seconds: 60 }, admin))).code).toBe(
      "invariant_violated",
    );
  });
});
