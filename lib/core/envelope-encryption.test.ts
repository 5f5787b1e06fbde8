import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSealed, open, parseSealed, seal, unwrapKey, wrapKey } from "@/lib/core/envelope-encryption";

const key = randomBytes(32);

describe("sealed values", () => {
  it("open to what was sealed, under the same key and context", () => {
    const sealed = seal(key, "dk_1", "task_instructions.text:ins_1", "Do not refund Ada Lovelace");
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain("Ada");
    expect(open(key, parseSealed(sealed)!, "task_instructions.text:ins_1")).toBe("Do not refund Ada Lovelace");
  });

  it("differ each time the same words are sealed (a fresh nonce), so equal values are not visible as equal", () => {
    expect(seal(key, "dk_1", "c", "same")).not.toBe(seal(key, "dk_1", "c", "same"));
  });

  it("do not open in another place, under another key, or once a byte is changed", () => {
    const sealed = seal(key, "dk_1", "task_instructions.text:ins_1", "words");
    expect(() => open(key, parseSealed(sealed)!, "task_instructions.text:ins_2")).toThrow(/sealed for/);
    expect(() => open(randomBytes(32), parseSealed(sealed)!)).toThrow();
    const parts = parseSealed(sealed)!;
    parts.sealed[0] = parts.sealed[0]! ^ 1;
    expect(() => open(key, parts)).toThrow();
    // The context is authenticated too: a value relabelled for another place fails its tag.
    const relabelled = sealed.split(".");
    relabelled[2] = Buffer.from("task_instructions.text:ins_2").toString("base64url");
    expect(() => open(key, parseSealed(relabelled.join("."))!)).toThrow();
  });

  it("are told apart from text stored in the clear", () => {
    expect(isSealed("User approved refund")).toBe(false);
    expect(parseSealed("vty1.not.a.sealed value")).toBeNull();
  });

  it("wrap data keys under a key-encryption key", () => {
    const kek = randomBytes(32);
    const dataKey = randomBytes(32);
    const wrapped = wrapKey(kek, dataKey, "kek-default-1");
    expect(unwrapKey(kek, wrapped).equals(dataKey)).toBe(true);
    expect(() => unwrapKey(randomBytes(32), wrapped)).toThrow();
  });
});
