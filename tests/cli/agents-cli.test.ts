import { describe, expect, it } from "vitest";
import { authenticateApiToken } from "@/lib/stores/api-tokens";
import { createUser } from "@/lib/stores/users";
import { useCliDataDir } from "@/tests/cli/cli-harness";

/**
 * `npm run -s verity -- agents …` and `tokens …` as real processes (the npm
 * script's code) against a temporary embedded database folder,
 * which the CLI creates and migrates itself. The folder belongs to one
 * process at a time, so the checks open it only after the commands exit.
 */
const { verity, withDatabase } = useCliDataDir("verity-cli-", { folder: "none" });

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
  it(
    "grants read_restricted only as a person who holds data:restricted (--as), refusing in words otherwise",
    { timeout: 400_000 },
    async () => {
      // Exit code and words of a command that may fail.
      const attempt = async (...args: string[]) =>
        verity(...args).then(
          (out) => ({ code: 0, out }),
          (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
        );
      await verity("agents", "list");
      await withDatabase(async (db) => {
        await createUser(db, { username: "ada", displayName: "Ada", role: "admin", password: "correct-horse-1" });
        await createUser(db, { username: "otto", displayName: "Otto", role: "auditor", password: "correct-horse-2" });
      });

      const nobody = await attempt("agents", "create", "replayer", "--read-restricted");
      expect(nobody.code).toBe(2);
      expect(nobody.out).toContain("--read-restricted needs --as <username>");
      const auditor = await attempt("agents", "create", "replayer", "--read-restricted", "--as", "otto");
      expect(auditor.code).toBe(1);
      expect(auditor.out).toContain("Only a person who may read restricted fields (data:restricted)");
      const unknown = await attempt("agents", "create", "replayer", "--read-restricted", "--as", "nemo");
      expect(unknown.code).toBe(1);
      expect(unknown.out).toContain('no enabled person "nemo"');
      expect(await withDatabase((db) => db.apiToken.count({ where: { name: "replayer" } }))).toBe(0);

      const granted = JSON.parse(
        await verity("agents", "create", "replayer", "--read-restricted", "--as", "ada", "--json"),
      ) as { token: string; token_id: string };
      await withDatabase(async (db) => {
        const principal = await authenticateApiToken(db, granted.token);
        expect(principal?.scopes?.read_restricted).toBe(true);
        const issued = await db.auditEntry.findFirstOrThrow({
          where: { action: "agent.token_issued", subjectId: granted.token_id },
        });
        expect(issued.actor).toBe("spiffe://verity.local/user/ada");
      });
    },
  );
});
