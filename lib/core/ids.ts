import { randomFillSync } from "node:crypto";

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

// Random bytes drawn 4 KiB at a time: one call to the CSPRNG per 256 ids
// instead of one per id, which was 6% of a transition's client CPU (two ids
// each). The bytes are used once and never shared between ids.
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomChars(count: number): string {
  if (offset + count > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let chars = "";
  for (let i = 0; i < count; i++) chars += alphabet[pool[offset + i]! % 32];
  offset += count;
  return chars;
}

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
  return `${prefix}_${time}${randomChars(16)}`;
}
