import { describe, expect, it } from "vitest";
import {
  hmacHex,
  signPayload,
  verifyPayloadSignature,
  type CheckpointKeyring,
} from "@/lib/model/checkpoints/checkpoint-keys";

const k1 = "k1-secret-0123456789abcdef0123456789abcdef";
const k2 = "k2-secret-fedcba9876543210fedcba9876543210";

describe("checkpoint signatures", () => {
  const ring: CheckpointKeyring = { activeKeyId: "k1", keys: { k1 } };

  it("signs with the active key, HMAC-SHA256 over the payload bytes, and verifies", () => {
    const { keyId, signature } = signPayload('{"a":1}', ring);
    expect(keyId).toBe("k1");
    expect(signature).toBe(hmacHex(k1, '{"a":1}'));
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyPayloadSignature('{"a":1}', signature, "k1", ring)).toMatchObject({ ok: true });
  });

  it("fails on any other payload, signature or key, saying which", () => {
    const { signature } = signPayload('{"a":1}', ring);
    expect(verifyPayloadSignature('{"a":2}', signature, "k1", ring)).toMatchObject({
      ok: false,
      message: expect.stringContaining("does not match"),
    });
    const flipped = (signature[0] === "0" ? "1" : "0") + signature.slice(1);
    expect(verifyPayloadSignature('{"a":1}', flipped, "k1", ring).ok).toBe(false);
    expect(verifyPayloadSignature('{"a":1}', signature.slice(0, 63), "k1", ring)).toMatchObject({
      ok: false,
      message: expect.stringContaining("64 hex"),
    });
    expect(verifyPayloadSignature('{"a":1}', signature, "k9", ring)).toMatchObject({
      ok: false,
      message: expect.stringContaining('key "k9" is not in'),
    });
  });

  it("does not take a key id from the object prototype", () => {
    const { signature } = signPayload("x", ring);
    expect(verifyPayloadSignature("x", signature, "constructor", ring).ok).toBe(false);
    expect(verifyPayloadSignature("x", signature, "__proto__", ring).ok).toBe(false);
  });

  it("rotates: new checkpoints use the new key, old ones verify with the key they name, until it leaves the ring", () => {
    const old = signPayload("old", { activeKeyId: "k1", keys: { k1 } });
    const rotated: CheckpointKeyring = { activeKeyId: "k2", keys: { k2, k1 } };
    const fresh = signPayload("new", rotated);
    expect(fresh.keyId).toBe("k2");
    expect(verifyPayloadSignature("old", old.signature, old.keyId, rotated).ok).toBe(true);
    expect(verifyPayloadSignature("new", fresh.signature, fresh.keyId, rotated).ok).toBe(true);
    // The old key's signature is not accepted under the new key id.
    expect(verifyPayloadSignature("old", old.signature, "k2", rotated).ok).toBe(false);
    const retired: CheckpointKeyring = { activeKeyId: "k2", keys: { k2 } };
    expect(verifyPayloadSignature("old", old.signature, old.keyId, retired)).toMatchObject({
      ok: false,
      message: expect.stringContaining('"k1" is not in'),
    });
  });

  it("refuses to sign with an active key missing from the ring", () => {
    expect(() => signPayload("x", { activeKeyId: "k3", keys: { k1 } })).toThrow(/k3/);
  });
});
