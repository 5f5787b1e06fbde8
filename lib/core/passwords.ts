import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/**
 * scrypt from node:crypto: memory-hard, no native dependency to install.
 * Parameters at OWASP's current guidance (N=2^17, r=8, p=1: 128 MiB per
 * hash) unless the caller passes another N (VERITY_PASSWORD_SCRYPT_N,
 * lib/config/env.ts). Each hash carries its own parameters, so hashes made
 * under older, weaker ones still verify and are replaced on the next
 * successful sign-in (needsRehash).
 */
export const defaultScryptN = 2 ** 17;
const r = 8;
const p = 1;
const keyLength = 32;
// scrypt needs 128·N·r bytes (128 MiB here); node's default limit is 32 MiB.
const maxmem = 256 * 1024 * 1024;

function derive(password: string, salt: Buffer, n: number, rr: number, pp: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, { N: n, r: rr, p: pp, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

type ParsedHash = { n: number; r: number; p: number; salt: Buffer; key: Buffer };

function parseHash(stored: string): ParsedHash | null {
  const [scheme, n, rr, pp, salt, key, ...rest] = stored.split("$");
  if (scheme !== "scrypt" || !n || !rr || !pp || !salt || !key || rest.length > 0) return null;
  const params = [Number(n), Number(rr), Number(pp)] as const;
  if (!params.every((v) => Number.isSafeInteger(v) && v > 0)) return null;
  // A hash asking for more memory than we allow is not ours: refuse it rather than fail inside scrypt.
  if (128 * params[0] * params[1] * params[2] > maxmem) return null;
  return {
    n: params[0],
    r: params[1],
    p: params[2],
    salt: Buffer.from(salt, "base64url"),
    key: Buffer.from(key, "base64url"),
  };
}

export async function hashPassword(password: string, n = defaultScryptN): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, n, r, p);
  return `scrypt$${n}$${r}$${p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await derive(password, parsed.salt, parsed.n, parsed.r, parsed.p);
  return actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
}

/** True when `stored` was made with weaker parameters than hashPassword uses today (at cost `n`). */
export function needsRehash(stored: string, n = defaultScryptN): boolean {
  const parsed = parseHash(stored);
  return parsed !== null && (parsed.n < n || parsed.r < r || parsed.p < p || parsed.key.length < keyLength);
}

/** A valid hash of nothing anyone knows, at today's parameters: verifying against it costs the same as a real check. */
export function unusablePasswordHash(n = defaultScryptN): string {
  return `scrypt$${n}$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
}
