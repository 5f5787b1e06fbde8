/**
 * Sign-in throttling as a pure rule over one key's counter (a username or an
 * address; the store keeps one row per key in `sign_in_throttles`).
 *
 * Each attempt is counted before its password is checked, under the row's
 * lock: forty attempts sent at once are seen one after another, and only the
 * first few get a password check at all. A correct password then takes its
 * count back (forgiveSignInAttempt). Once a key reaches `maxFailures` within
 * `windowMs`, it is blocked; each further failure after a block ends blocks
 * it again for twice as long, up to `maxBlockMs`. Attempts while blocked are
 * refused unchecked and not counted, so they do not lengthen the block.
 */

export type ThrottleRule = {
  maxFailures: number;
  windowMs: number;
  firstBlockMs: number;
  maxBlockMs: number;
};

/** Per username: an account's password cannot be guessed faster than this. */
export const usernameThrottle: ThrottleRule = {
  maxFailures: 5,
  windowMs: 15 * 60_000,
  firstBlockMs: 60_000,
  maxBlockMs: 60 * 60_000,
};

/** Per address: looser, since people behind one NAT share it, but it bounds guessing across usernames. */
export const addressThrottle: ThrottleRule = {
  maxFailures: 20,
  windowMs: 15 * 60_000,
  firstBlockMs: 60_000,
  maxBlockMs: 60 * 60_000,
};

/** The username's counter: sign-in and a change of password (its current password) count against the same one. */
export function usernameThrottleKey(username: string): string {
  return `user:${username.toLowerCase()}`;
}

export type ThrottleCounter = { failures: number; windowStartedAt: Date; blockedUntil: Date | null };

export type AttemptVerdict =
  { allowed: false; retryAt: Date } | { allowed: true; counter: ThrottleCounter; blocks: boolean };

export function isBlocked(counter: ThrottleCounter | null, now: Date): boolean {
  return counter?.blockedUntil != null && counter.blockedUntil > now;
}

/**
 * The attempt's verdict and the counter it leaves (counting this attempt as
 * a failure until it is forgiven). `blocks` says this attempt's count is the
 * one that blocked the key: if it turns out a failure, that is the moment
 * worth one audit entry.
 */
export function countAttempt(counter: ThrottleCounter | null, now: Date, rule: ThrottleRule): AttemptVerdict {
  if (counter && isBlocked(counter, now)) return { allowed: false, retryAt: counter.blockedUntil! };
  // A run of failures ends after a quiet window: since it started, or since its last block ended.
  const lastActivity = Math.max(counter?.windowStartedAt.getTime() ?? 0, counter?.blockedUntil?.getTime() ?? 0);
  if (!counter || now.getTime() - lastActivity >= rule.windowMs) {
    const fresh = { failures: 1, windowStartedAt: now, blockedUntil: null };
    return rule.maxFailures <= 1
      ? {
          allowed: true,
          counter: { ...fresh, blockedUntil: new Date(now.getTime() + rule.firstBlockMs) },
          blocks: true,
        }
      : { allowed: true, counter: fresh, blocks: false };
  }
  const failures = counter.failures + 1;
  if (failures < rule.maxFailures) return { allowed: true, counter: { ...counter, failures }, blocks: false };
  const delay = Math.min(rule.firstBlockMs * 2 ** (failures - rule.maxFailures), rule.maxBlockMs);
  return {
    allowed: true,
    counter: { ...counter, failures, blockedUntil: new Date(now.getTime() + delay) },
    blocks: true,
  };
}

/** The counter after a correct password takes its attempt's count back. */
export function forgiveAttempt(counter: ThrottleCounter, rule: ThrottleRule): ThrottleCounter {
  const failures = Math.max(counter.failures - 1, 0);
  return { ...counter, failures, blockedUntil: failures < rule.maxFailures ? null : counter.blockedUntil };
}
