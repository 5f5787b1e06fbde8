import { scryptSync } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { signInWithPassword } from "@/lib/adapters/auth/audit-trail";
import { needsRehash, verifyPassword } from "@/lib/core/passwords";
import { passwordScryptN } from "@/lib/config/env";
import { listAuditEntries } from "@/lib/stores/audit-log";
import { createUser } from "@/lib/stores/users";
import { useTestDatabase } from "@/tests/helpers/use-test-database";

/**
 * Issue 11's reproduction: 40 wrong passwords in 5 s, then the right one
 * worked, and every attempt appended an audit entry. Now each attempt is
 * counted before its password is checked, so a burst is cut off after five,
 * the right password is refused with the time to retry, and the burst leaves
 * one audit entry.
 */
const db = useTestDatabase();
const password = "correct horse battery";

beforeAll(async () => {
  for (const username of ["grace", "linus", "edsger", "barbara"])
    await createUser(db, { username, displayName: username, role: "operator", password });
});

async function throttleEntries() {
  return (await listAuditEntries(db, {}, { limit: 1000 })).items.filter((e) => e.action === "auth.sign_in_throttled");
}

describe("sign-in throttling", () => {
  it(
    "cuts a burst of 40 wrong passwords off after five, refuses the right one meanwhile, and records one entry",
    { timeout: 180_000 },
    async () => {
      const start = new Date();
      const burst = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          signInWithPassword(db, { username: "grace", password: `guess-${i}`, address: "198.51.100.1" }, start),
        ),
      );
      expect(burst.filter((r) => r.kind === "invalid")).toHaveLength(5);
      expect(burst.filter((r) => r.kind === "throttled")).toHaveLength(35);

      const right = await signInWithPassword(db, { username: "grace", password, address: "198.51.100.2" }, start);
      expect(right).toEqual({ kind: "throttled", retryAt: new Date(start.getTime() + 60_000) });

      const entries = await throttleEntries();
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        actor: "anonymous",
        subjectType: "user",
        subjectId: "grace",
        details: { scope: "username", failures: 5, blocked_until: new Date(start.getTime() + 60_000).toISOString() },
      });

      // Once the block ends the right password works, and the account's counter starts over.
      const later = new Date(start.getTime() + 61_000);
      expect(
        await signInWithPassword(db, { username: "grace", password, address: "198.51.100.2" }, later),
      ).toMatchObject({
        kind: "signed_in",
      });
      expect(await db.signInThrottle.findUnique({ where: { key: "user:grace" } })).toBeNull();
    },
  );

  it("doubles the block on a failure after it ends", { timeout: 180_000 }, async () => {
    const start = new Date();
    for (let i = 0; i < 5; i++)
      await signInWithPassword(db, { username: "linus", password: "x", address: null }, start);
    const after = new Date(start.getTime() + 60_001);
    expect(await signInWithPassword(db, { username: "linus", password: "x", address: null }, after)).toEqual({
      kind: "invalid",
    });
    expect(await signInWithPassword(db, { username: "linus", password, address: null }, after)).toEqual({
      kind: "throttled",
      retryAt: new Date(after.getTime() + 120_000),
    });
  });

  it("throttles an address trying many usernames, and only that address", async () => {
    const now = new Date();
    const address = "203.0.113.9";
    // Nineteen failures from this address already (each attempt costs a full scrypt; the counting is the rule's, tested beside it).
    await db.signInThrottle.create({
      data: { key: `address:${address}`, failures: 19, windowStartedAt: now, updatedAt: now },
    });
    await signInWithPassword(db, { username: "someone", password: "x", address }, now);
    expect(await signInWithPassword(db, { username: "edsger", password, address }, now)).toMatchObject({
      kind: "throttled",
    });
    expect(await signInWithPassword(db, { username: "edsger", password, address: "203.0.113.10" }, now)).toMatchObject({
      kind: "signed_in",
    });
    const entries = (await throttleEntries()).filter((e) => e.subjectType === "network_address");
    expect(entries.map((e) => [e.subjectId, (e.details as { failures: number }).failures])).toEqual([[address, 20]]);
  });

  it("a correct password takes its attempt back: four failures and a success leave the account unblocked", async () => {
    const now = new Date();
    for (let i = 0; i < 4; i++)
      await signInWithPassword(db, { username: "barbara", password: "x", address: "192.0.2.1" }, now);
    expect(await signInWithPassword(db, { username: "barbara", password, address: "192.0.2.1" }, now)).toMatchObject({
      kind: "signed_in",
    });
    expect(await db.signInThrottle.findUnique({ where: { key: "user:barbara" } })).toBeNull();
    expect(await db.signInThrottle.findUnique({ where: { key: "address:192.0.2.1" } })).toMatchObject({ failures: 4 });
    expect(await signInWithPassword(db, { username: "barbara", password: "x", address: "192.0.2.1" }, now)).toEqual({
      kind: "invalid",
    });
  });
});

describe("password hashes made with weaker parameters", () => {
  it("are verified, then replaced at today's parameters on the next successful sign-in", async () => {
    const user = await createUser(db, { username: "ken", displayName: "Ken", role: "operator", password: "unused" });
    const salt = Buffer.from("0123456789abcdef");
    // Weaker than any allowed setting (r=4: VERITY_PASSWORD_SCRYPT_N bounds N, never r).
    const legacy = `scrypt$16384$4$1$${salt.toString("base64url")}$${scryptSync(password, salt, 32, { N: 16384, r: 4, p: 1 }).toString("base64url")}`;
    await db.user.update({ where: { id: user.id }, data: { passwordHash: legacy } });

    const result = await signInWithPassword(db, { username: "ken", password, address: null });
    expect(result).toMatchObject({ kind: "signed_in", principal: { id: user.id } });
    const { passwordHash } = await db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(passwordHash).not.toBe(legacy);
    expect(passwordHash.startsWith(`scrypt$${passwordScryptN()}$8$1$`)).toBe(true);
    expect(needsRehash(passwordHash, passwordScryptN())).toBe(false);
    expect(await verifyPassword(password, passwordHash)).toBe(true);
    const signedIn = (await listAuditEntries(db, {}, { limit: 1000 })).items.filter(
      (e) => e.action === "auth.signed_in" && e.subjectId === user.id,
    );
    expect(signedIn.at(-1)?.details).toMatchObject({ password_rehashed: true });
  });
});
