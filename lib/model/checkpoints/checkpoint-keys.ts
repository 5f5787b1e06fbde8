import { createHmac, timingSafeEqual } from "node:crypto";
import { getCheckpointKeys } from "@/lib/config/env";

/**
 * Checkpoint signing keys. A keyring names every key by id; new checkpoints
 * are signed with the active one and record its id, so keys rotate without
 * re-signing anything: an old checkpoint verifies with the key its id names,
 * for as long as that key stays in the ring. A checkpoint whose key id is
 * not in the ring fails verification, by name: it cannot be told from a
 * forgery.
 *
 * Keys are never logged and never written into a checkpoint.
 */
export interface CheckpointKeyring {
  activeKeyId: string;
  keys: Readonly<Record<string, string>>;
}

/** The configured keyring (lib/config/env.ts): VERITY_CHECKPOINT_KEYS, or a key generated into the data folder. */
export function configuredKeyring(): CheckpointKeyring {
  return getCheckpointKeys();
}

/** HMAC-SHA256 of the payload bytes (UTF-8) with the named key, as hex. */
export function hmacHex(secret: string, payload: string): string {
  return createHmac("sha256", secret).update(payload, "utf8").digest("hex");
}

export function signPayload(payload: string, keyring: CheckpointKeyring): { keyId: string; signature: string } {
  const secret = keyring.keys[keyring.activeKeyId];
  // A keyring whose active key is missing is a configuration bug (lib/config/env.ts refuses it at boot).
  if (!secret) throw new Error(`checkpoint keyring: the active key "${keyring.activeKeyId}" is not in the ring`);
  return { keyId: keyring.activeKeyId, signature: hmacHex(secret, payload) };
}

export type SignatureCheck = { ok: true; message: string } | { ok: false; message: string };

export function verifyPayloadSignature(
  payload: string,
  signature: string,
  keyId: string,
  keyring: CheckpointKeyring,
): SignatureCheck {
  const secret = Object.hasOwn(keyring.keys, keyId) ? keyring.keys[keyId] : undefined;
  if (!secret)
    return {
      ok: false,
      message: `key "${keyId}" is not in this server's keyring (known: ${Object.keys(keyring.keys).join(", ")})`,
    };
  if (!/^[0-9a-f]{64}$/.test(signature)) return { ok: false, message: "the stored signature is not 64 hex digits" };
  const expected = Buffer.from(hmacHex(secret, payload), "hex");
  // Constant time: the comparison must not tell a forger how many bytes matched.
  if (!timingSafeEqual(expected, Buffer.from(signature, "hex")))
    return { ok: false, message: `HMAC-SHA256 with key "${keyId}" does not match the stored bytes` };
  return { ok: true, message: `HMAC-SHA256 with key "${keyId}" matches` };
}
