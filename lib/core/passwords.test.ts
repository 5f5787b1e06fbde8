import { scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashPassword, needsRehash, unusablePasswordHash, verifyPassword } from "@/lib/core/passwords";

/** A hash as the previous code made it: N=2^14. */
function legacyHash(password: string): string {
  const salt = Buffer.from("0123456789abcdef");
  const key = scryptSync(password, salt, 32, { N: 16384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

describe("passwords", () => {
  it("hashes at OWASP's current scrypt guidance and verifies", async () => {
    const hash = await hashPassword("correct horse");
    expect(hash.split("$").slice(0, 4)).toEqual(["scrypt", "131072", "8", "1"]);
    expect(await verifyPassword("correct horse", hash)).toBe(true);
    expect(await verifyPassword("wrong horse", hash)).toBe(false);
    expect(needsRehash(hash)).toBe(false);
  });

  it("still verifies a hash made at N=2^14, and says it needs a rehash", async () => {
    const old = legacyHash("correct horse");
    expect(await verifyPassword("correct horse", old)).toBe(true);
    expect(await verifyPassword("wrong horse", old)).toBe(false);
    expect(needsRehash(old)).toBe(true);
  });

  it("refuses malformed hashes and ones asking for more memory than allowed", async () => {
    expect(await verifyPassword("x", "bcrypt$whatever")).toBe(false);
    expect(await verifyPassword("x", "scrypt$-1$8$1$AAAA$AAAA")).toBe(false);
    expect(await verifyPassword("x", "scrypt$4194304$8$1$AAAA$AAAA")).toBe(false);
    expect(await verifyPassword("x", unusablePasswordHash())).toBe(false);
    expect(needsRehash(unusablePasswordHash())).toBe(false);
  });
});
