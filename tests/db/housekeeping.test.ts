import { describe, expect, it } from "vitest";
import { startBackgroundLoop } from "@/lib/jobs/background";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import { createUser } from "@/lib/stores/users";
import { unreachable } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * The background loop's housekeeping: rows that no longer stand for
 * anything are deleted, so tables written by anyone who reaches the sign-in
 * page do not grow for ever.
 */
const db = useTestDatabase();
const day = 24 * 3_600_000;

describe("background housekeeping", () => {
  it("prunes console sessions that expired over 30 days ago, keeps newer ones, and says so at info", async () => {
    await createUser(db, { username: "kim", displayName: "Kim", role: "operator", password: "kim-password" });
    const signIn = async (at: Date) => {
      const result = await signInWithPassword(db, { username: "kim", password: "kim-password", address: null }, at);
      if (result.kind !== "signed_in") throw new Error(result.kind);
      return result.sessionId;
    };
    const ancient = await signIn(new Date(Date.now() - 45 * day));
    const lastWeek = await signIn(new Date(Date.now() - 7 * day));
    const lines: string[] = [];
    const loop = startBackgroundLoop(db, unreachable, 3_600_000, { log: (l) => lines.push(l) });
    try {
      await loop.runOnce();
    } finally {
      await loop.stop();
    }
    const left = (await db.consoleSession.findMany({ select: { id: true } })).map((r) => r.id);
    expect(left).toContain(lastWeek);
    expect(left).not.toContain(ancient);
    expect(lines.filter((l) => l.includes("pruned"))).toEqual([
      expect.stringContaining("pruned 1 console session row(s)"),
    ]);
  });
});
