import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * AES-256-GCM under a data key, in one self-describing string:
 *
 *   vty1.<data key id>.<context, base64url>.<nonce, base64url>.<ciphertext + tag, base64url>
 *
 * The context names what the value is (e.g. `task_instructions.text:ins_…`)
 * and is the cipher's additional authenticated data: a sealed value copied
 * into another row or field no longer opens where a reader expects a
 * different context, and it cannot be edited without the tag failing. It is
 * not secret. The data key id says which key opens it, so old values stay
 * readable after a rotation. A fresh 96-bit random nonce per value: a data
 * key seals far fewer than the 2^32 values NIST SP 800-38D allows for random
 * nonces before it is rotated.
 *
 * Plain functions over bytes, no keys kept: the stores hold the keys
 * (lib/stores/field-encryption.ts), the key provider wraps them
 * (lib/config/keyring.ts).
 */

const PREFIX = "vty1";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const DATA_KEY_BYTES = 32;

export interface SealedParts {
  keyId: string;
  context: string;
  nonce: Buffer;
  /** The ciphertext followed by GCM's 16-byte tag. */
  sealed: Buffer;
}

/** Whether a stored string is a sealed value (anything else was stored in the clear). */
export function isSealed(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(`${PREFIX}.`);
}

export function seal(key: Buffer, keyId: string, context: string, plaintext: string): string {
  if (key.length !== DATA_KEY_BYTES) throw new Error("a data key is 32 bytes");
  if (keyId.includes(".")) throw new Error("a data key id may not contain '.'");
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return [PREFIX, keyId, b64(Buffer.from(context, "utf8")), b64(nonce), b64(body)].join(".");
}

/** The parts of a sealed value, or null when it is not one (or is malformed). */
export function parseSealed(value: string): SealedParts | null {
  const parts = value.split(".");
  if (parts.length !== 5 || parts[0] !== PREFIX) return null;
  const [, keyId, context, nonce, sealed] = parts as [string, string, string, string, string];
  const parsed = {
    keyId,
    context: Buffer.from(context, "base64url").toString("utf8"),
    nonce: Buffer.from(nonce, "base64url"),
    sealed: Buffer.from(sealed, "base64url"),
  };
  if (!keyId || parsed.nonce.length !== NONCE_BYTES || parsed.sealed.length < TAG_BYTES) return null;
  return parsed;
}

/**
 * The plaintext of a sealed value, checked against the context the reader
 * expects. Throws when the tag fails (a wrong key, an edited value) or the
 * value was sealed for another context.
 */
export function open(key: Buffer, parts: SealedParts, expectedContext?: string): string {
  if (expectedContext !== undefined && parts.context !== expectedContext)
    throw new Error(`a value sealed for "${parts.context}" was found where "${expectedContext}" was expected`);
  const decipher = createDecipheriv("aes-256-gcm", key, parts.nonce);
  decipher.setAAD(Buffer.from(parts.context, "utf8"));
  decipher.setAuthTag(parts.sealed.subarray(parts.sealed.length - TAG_BYTES));
  const body = parts.sealed.subarray(0, parts.sealed.length - TAG_BYTES);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
}

/** AES-256-GCM key wrapping (a data key under a key-encryption key), the same construction without a context string. */
export function wrapKey(kek: Buffer, dataKey: Buffer, kekId: string): string {
  return seal(kek, kekId, "data-key", dataKey.toString("base64"));
}

export function unwrapKey(kek: Buffer, wrapped: string): Buffer {
  const parts = parseSealed(wrapped);
  if (!parts) throw new Error("not a wrapped data key");
  return Buffer.from(open(kek, parts, "data-key"), "base64");
}

function b64(bytes: Buffer): string {
  return bytes.toString("base64url");
}
