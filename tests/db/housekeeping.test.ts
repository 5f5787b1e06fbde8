import { describe, expect, it } from "vitest";
import { startBackgroundLoop } from "@/lib/jobs/background";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import { createUser } from "@/lib/stores/users";
import { pruneSignInThrottles, reserveSignInAttempt } from "@/lib/stores/sign-in-throttles";
import { countAttempt, usernameThrottle } from "@/lib/model/auth/sign-in-throttle";
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

  it("prunes sign-in throttle counters whose window has passed, and only those: no verdict changes", async () => {
    const now = new Date();
    const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
    const rule = usernameThrottle;
    const fail = (key: string, at: Date) => reserveSignInAttempt(db, [{ key, rule }], at);
    // One failure 20 minutes ago: its 15-minute window has passed.
    await fail("user:quiet", ago(20));
    // One failure 5 minutes ago: still counting.
    await fail("user:recent", ago(5));
    // Five failures 30 minutes ago blocked it for a minute; the block ended 29 minutes ago.
    for (let i = 0; i < 5; i++) await fail("user:old-block", ago(30));
    // Blocked 3 minutes ago, a minute's block, ended 2 minutes ago: a failure now would block it again.
    for (let i = 0; i < 5; i++) await fail("user:just-blocked", ago(3));
    // Blocked right now.
    for (let i = 0; i < 5; i++) await fail("user:blocked", now);

    const before = await db.signInThrottle.findMany();
    const deleted = await pruneSignInThrottles(db, now, rule.windowMs);
    const left = (await db.signInThrottle.findMany()).map((r) => r.key).sort();
    expect(left).toEqual(["user:blocked", "user:just-blocked", "user:recent"]);
    expect(deleted).toBe(2);
    // Each pruned row would have started afresh anyway: the same verdict as a key with no row.
    for (const row of before.filter((r) => !left.includes(r.key)))
      expect(countAttempt(row, now, rule)).toEqual(countAttempt(null, now, rule));
    // And a kept row would not have.
    const kept = before.find((r) => r.key === "user:just-blocked")!;
    expect(countAttempt(kept, now, rule)).not.toEqual(countAttempt(null, now, rule));
  });

  it("the loop prunes spent throttle counters too", async () => {
    await reserveSignInAttempt(
      db,
      [{ key: "address:203.0.113.9", rule: usernameThrottle }],
      new Date(Date.now() - 3_600_000),
    );
    const lines: string[] = [];
    const loop = startBackgroundLoop(db, unreachable, 3_600_000, { log: (l) => lines.push(l) });
    try {
      await loop.runOnce();
    } finally {
      await loop.stop();
    }
    expect(await db.signInThrottle.findUnique({ where: { key: "address:203.0.113.9" } })).toBeNull();
    expect(lines).toContainEqual(expect.stringContaining("pruned 1 sign-in throttle counter(s)"));
  });
});
