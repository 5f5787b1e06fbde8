import { describe, expect, it } from "vitest";
import { verifyPassword } from "@/lib/core/passwords";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { getPerson, readPasswordHash } from "@/lib/stores/users";
import { useCliDataDir } from "@/tests/cli/cli-harness";

/**
 * `npm run -s verity -- users create / reset-password` as real processes
 * against a temporary migrated embedded database folder, opened by the checks only after the commands exit.
 */
const { verity, withDatabase } = useCliDataDir("verity-users-cli-");

describe("verity users CLI and passwords", () => {
  it("a created person's generated password must be replaced; reset-password prints a new one once and records it", async () => {
    const created = JSON.parse(
      await verity("users", "create", "olga", "--role", "engineer", "--display-name", "Olga", "--json"),
    ) as { person: { password_must_change: boolean }; initial_password: string };
    expect(created.person.password_must_change).toBe(true);
    expect(created.initial_password).toMatch(/^[A-Za-z0-9_-]{20}$/);

    const text = await verity("users", "reset-password", "olga");
    const printed = [...text.matchAll(/one-time password \(shown once[^)]*\): (\S+)/g)].map((m) => m[1]!);
    expect(printed).toHaveLength(1);
    expect(text).toContain("olga has a new password; 0 open session(s) ended");
    const oneTime = printed[0]!;
    expect(oneTime).not.toBe(created.initial_password);

    const json = JSON.parse(await verity("users", "reset-password", "olga", "--json")) as {
      one_time_password: string;
      sessions_ended: number;
      person: { username: string; password_must_change: boolean };
    };
    expect(json).toMatchObject({ sessions_ended: 0, person: { username: "olga", password_must_change: true } });

    await withDatabase(async (db) => {
      const olga = (await getPerson(db, { username: "olga" }))!;
      expect(olga.passwordMustChange).toBe(true);
      const hash = (await readPasswordHash(db, olga.id))!;
      expect(await verifyPassword(json.one_time_password, hash)).toBe(true);
      expect(await verifyPassword(oneTime, hash)).toBe(false);
      const resets = (await listAuditEntries(db, {}, { limit: 100 })).items.filter(
        (e) => e.action === "user.password_reset",
      );
      expect(resets).toHaveLength(2);
      expect(resets[0]).toMatchObject({ actor: "system:cli", details: { via: "cli", username: "olga" } });
      expect(JSON.stringify(resets)).not.toContain(json.one_time_password);
    });
  });

  it("refuses an unknown person in words, exit code not 0", async () => {
    const failure = await verity("users", "reset-password", "nobody").then(
      () => null,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(failure?.code).not.toBe(0);
    expect(failure?.stderr).toContain("No person named nobody");
  });
});
