import { describe, expect, it } from "vitest";
import {
  countAttempt,
  forgiveAttempt,
  usernameThrottle,
  type ThrottleCounter,
} from "@/lib/model/auth/sign-in-throttle";

const t0 = new Date("2026-12-01T12:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

/** Failures at the given times, each allowed one applied; the verdicts in order. */
function run(times: number[], start: ThrottleCounter | null = null) {
  let counter = start;
  const verdicts = times.map((ms) => {
    const verdict = countAttempt(counter, at(ms), usernameThrottle);
    if (verdict.allowed) counter = verdict.counter;
    return verdict;
  });
  return { verdicts, counter };
}

describe("sign-in throttle", () => {
  it("blocks on the fifth failure within 15 minutes, for a minute, and refuses unchecked meanwhile", () => {
    const { verdicts, counter } = run([0, 1000, 2000, 3000, 4000, 5000, 59_000]);
    expect(verdicts.slice(0, 5).map((v) => v.allowed && v.blocks)).toEqual([false, false, false, false, true]);
    expect(verdicts[5]).toEqual({ allowed: false, retryAt: at(64_000) });
    expect(verdicts[6]).toEqual({ allowed: false, retryAt: at(64_000) });
    // Refused attempts are not counted: the block does not grow while it holds.
    expect(counter).toMatchObject({ failures: 5, blockedUntil: at(64_000) });
  });

  it("doubles the block for each failure after one ends, up to an hour", () => {
    const { counter } = run([0, 1, 2, 3, 4]);
    let c = counter!;
    const blocks: number[] = [];
    for (let i = 0; i < 8; i++) {
      const now = c.blockedUntil!;
      const verdict = countAttempt(c, now, usernameThrottle);
      if (!verdict.allowed) throw new Error("expected an attempt after the block");
      c = verdict.counter;
      blocks.push((c.blockedUntil!.getTime() - now.getTime()) / 60_000);
    }
    expect(blocks).toEqual([2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it("starts over after a quiet window", () => {
    const { verdicts } = run([0, 1, 2, 3, 15 * 60_000, 15 * 60_000 + 1]);
    expect(verdicts.every((v) => v.allowed && !v.blocks)).toBe(true);
  });

  it("a correct password takes its own count back, unblocking a key it had just blocked", () => {
    const { counter } = run([0, 1, 2, 3, 4]);
    expect(forgiveAttempt(counter!, usernameThrottle)).toMatchObject({ failures: 4, blockedUntil: null });
    const { counter: longer } = run([0, 1, 2, 3, 4, 64_004]);
    expect(forgiveAttempt(longer!, usernameThrottle)).toMatchObject({
      failures: 5,
      blockedUntil: longer!.blockedUntil,
    });
  });
});
