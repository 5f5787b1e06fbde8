import { describe, expect, it } from "vitest";
import { authenticateApiToken } from "@/lib/stores/api-tokens";
import { useCliDataDir } from "@/tests/cli/cli-harness";

/**
 * `npm run -s verity -- agents …` and `tokens …` as real processes (tsx, as
 * the npm script runs it) against a temporary embedded database folder,
 * which the CLI creates and migrates itself. The folder belongs to one
 * process at a time, so the checks open it only after the commands exit.
 */
const { verity, withDatabase } = useCliDataDir("verity-cli-");

describe("verity agents / tokens CLI", () => {
  it("creates a scoped agent, lists its tokens without the secret, rotates with an overlap and revokes", async () => {
    const created = JSON.parse(
      await verity(
        "agents",
        "create",
        "pay-bot",
        "--workflows",
        "agent-task,delivery",
        "--tools",
        "payments.refund",
        "--take-over",
        "--expires-in",
        "30d",
        "--json",
      ),
    ) as { identity: string; token: string; token_id: string };
    expect(created.identity).toBe("spiffe://verity.local/agent/pay-bot");
    expect(created.token).toMatch(/^vrt_/);

    const listed = await verity("agents", "tokens", "pay-bot", "--json");
    expect(listed).not.toContain(created.token);
    expect(JSON.parse(listed)).toMatchObject([
      {
        id: created.token_id,
        state: "live",
        scopes: { workflows: ["agent-task", "delivery"], tools: ["payments.refund"], take_over_leases: true },
      },
    ]);

    const rotated = JSON.parse(await verity("tokens", "rotate", created.token_id, "--overlap", "1h", "--json")) as {
      token: string;
      token_id: string;
      previous: { expires_at: string };
    };
    const overlapEnd = new Date(rotated.previous.expires_at).getTime();
    expect(overlapEnd - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(overlapEnd - Date.now()).toBeLessThanOrEqual(3_600_000);

    await verity("tokens", "revoke", rotated.token_id);
    await withDatabase(async (db) => {
      expect(await authenticateApiToken(db, rotated.token)).toBeNull();
      // The old one still works in its overlap, with the scopes it was issued.
      expect((await authenticateApiToken(db, created.token))?.scopes).toMatchObject({ take_over_leases: true });
      const actions = (await db.auditEntry.findMany({ where: { action: { startsWith: "agent." } } })).map(
        (e) => e.action,
      );
      expect(actions.sort()).toEqual(["agent.token_issued", "agent.token_revoked", "agent.token_rotated"]);
    });
  }, 900_000);
});
