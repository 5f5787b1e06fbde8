import { randomBytes } from "node:crypto";

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/**
 * Time-ordered ids (`task_01k…`): 10 characters of milliseconds then 16 of
 * randomness, so new ids sort after old ones and never collide in practice.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let rand = "";
  for (const b of bytes) rand += alphabet[b % 32];
  return `${prefix}_${time}${rand}`;
}
