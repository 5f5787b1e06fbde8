import type { Db } from "@/lib/db/client";
import {
  countAttempt,
  forgiveAttempt,
  type ThrottleCounter,
  type ThrottleRule,
} from "@/lib/model/auth/sign-in-throttle";

/**
 * The owner of `sign_in_throttles`: one failure counter per key
 * (`user:<name>`, `address:<ip>`), the rule in lib/model/auth/sign-in-throttle.ts.
 */

export type ThrottleKey = { key: string; rule: ThrottleRule };

export type AttemptReservation =
  | { allowed: false; retryAt: Date }
  /** `blocked`: the keys this attempt's count blocked, with their counts (for one audit entry if it fails). */
  | { allowed: true; blocked: Array<{ key: string; failures: number; blockedUntil: Date }> };

/**
 * Counts an attempt against every key before its password is checked, or
 * refuses it when any key is blocked (counting nothing). All keys' rows are
 * locked in key order in one transaction, so concurrent attempts on a key
 * are counted one after another and cannot deadlock each other.
 */
export async function reserveSignInAttempt(db: Db, keys: ThrottleKey[], now: Date): Promise<AttemptReservation> {
  const sorted = [...keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return db.$transaction(async (tx) => {
    const counters = new Map<string, ThrottleCounter | null>();
    for (const { key } of sorted) {
      const rows = await tx.$queryRaw<Array<{ failures: number; window_started_at: Date; blocked_until: Date | null }>>`
        SELECT failures, window_started_at, blocked_until FROM sign_in_throttles WHERE key = ${key} FOR UPDATE`;
      const row = rows[0];
      counters.set(
        key,
        row
          ? { failures: row.failures, windowStartedAt: row.window_started_at, blockedUntil: row.blocked_until }
          : null,
      );
    }
    const verdicts = sorted.map(({ key, rule }) => ({
      key,
      verdict: countAttempt(counters.get(key) ?? null, now, rule),
    }));
    const refused = verdicts.flatMap(({ verdict }) => (verdict.allowed ? [] : [verdict.retryAt]));
    if (refused.length > 0) return { allowed: false, retryAt: new Date(Math.max(...refused.map((d) => d.getTime()))) };
    const blocked: Array<{ key: string; failures: number; blockedUntil: Date }> = [];
    for (const { key, verdict } of verdicts) {
      if (!verdict.allowed) continue;
      const { failures, windowStartedAt, blockedUntil } = verdict.counter;
      if (counters.get(key))
        await tx.$executeRaw`
          UPDATE sign_in_throttles SET failures = ${failures}, window_started_at = ${windowStartedAt},
            blocked_until = ${blockedUntil}, updated_at = ${now}
          WHERE key = ${key}`;
      // A new key has no row to lock: two first attempts both read none, and the second adds one to the first's count.
      else
        await tx.$executeRaw`
          INSERT INTO sign_in_throttles (key, failures, window_started_at, blocked_until, updated_at)
          VALUES (${key}, ${failures}, ${windowStartedAt}, ${blockedUntil}, ${now})
          ON CONFLICT (key) DO UPDATE SET failures = sign_in_throttles.failures + 1, updated_at = EXCLUDED.updated_at`;
      if (verdict.blocks && blockedUntil) blocked.push({ key, failures, blockedUntil });
    }
    return { allowed: true, blocked };
  });
}

/**
 * A correct password: the keys in `clear` start over (the account's own
 * counter), the others take back the one count this attempt added.
 */
export async function forgiveSignInAttempt(
  db: Db,
  input: { clear: string[]; forgive: ThrottleKey[] },
  now: Date,
): Promise<void> {
  await db.$transaction(async (tx) => {
    if (input.clear.length > 0) await tx.signInThrottle.deleteMany({ where: { key: { in: input.clear } } });
    for (const { key, rule } of input.forgive) {
      const row = await tx.signInThrottle.findUnique({ where: { key } });
      if (!row) continue;
      const next = forgiveAttempt(row, rule);
      await tx.signInThrottle.update({
        where: { key },
        data: { failures: next.failures, blockedUntil: next.blockedUntil, updatedAt: now },
      });
    }
  });
}

/**
 * Deletes the counters that no longer count: not blocked, and quiet for a
 * whole window since their run started or their last block ended. For such
 * a row countAttempt already starts afresh, exactly as for a key with no row,
 * so deleting it changes no verdict. `windowMs` must be the longest window
 * of any rule whose keys live here. Without this, every username and address
 * anyone ever tried would stay a row for ever.
 */
export async function pruneSignInThrottles(db: Db, now: Date, windowMs: number): Promise<number> {
  const quietSince = new Date(now.getTime() - windowMs);
  return db.$executeRaw`
    DELETE FROM sign_in_throttles
     WHERE GREATEST(window_started_at, COALESCE(blocked_until, window_started_at)) <= ${quietSince}`;
}
