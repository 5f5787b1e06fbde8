import { sleep } from "@/lib/core/sleep";

/**
 * Requests held by a `latency=<ms>` fault, by idempotency key, so the test
 * harness can end a hold early (POST /__sandbox/held/release) once it has
 * seen what it waited for: a browser test that needs a refund in flight
 * while the reconciler freezes it otherwise waits out the whole latency
 * after the freeze. A released request goes on exactly as if its latency
 * had passed, faults included; closing the sandbox still cuts it short.
 */
export class HeldRequests {
  private readonly holds = new Map<string, { release: AbortController; waiting: number }>();

  /** Waits `ms`, or until released; false only when `lifetime` aborts (the sandbox is closing). */
  async wait(ms: number, key: string, lifetime: AbortSignal): Promise<boolean> {
    const hold = this.holds.get(key) ?? { release: new AbortController(), waiting: 0 };
    this.holds.set(key, hold);
    hold.waiting++;
    try {
      await sleep(ms, AbortSignal.any([lifetime, hold.release.signal]));
    } finally {
      if (--hold.waiting === 0 && this.holds.get(key) === hold) this.holds.delete(key);
    }
    return !lifetime.aborted;
  }

  /** Ends the holds under `key`, or every hold without one; how many requests were let go. */
  release(key?: string): number {
    let released = 0;
    for (const k of key === undefined ? [...this.holds.keys()] : [key]) {
      const hold = this.holds.get(k);
      if (!hold) continue;
      this.holds.delete(k);
      released += hold.waiting;
      hold.release.abort();
    }
    return released;
  }
}
