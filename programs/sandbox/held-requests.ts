/**
 * Requests held by a `latency=<ms>` fault, by idempotency key, so the test
 * harness can end a hold early (POST /__sandbox/held/release) once it has
 * seen what it waited for: a browser test that needs a refund in flight
 * while the reconciler freezes it otherwise waits out the whole latency
 * after the freeze. A released request goes on exactly as if its latency
 * had passed, faults included; closing the sandbox still cuts it short.
 */
export class HeldRequests {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Waits `ms`, or until released; false only when `lifetime` aborts (the sandbox is closing). */
  wait(ms: number, key: string, lifetime: AbortSignal): Promise<boolean> {
    if (lifetime.aborted) return Promise.resolve(false);
    if (!(ms > 0)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const end = (passed: boolean) => {
        clearTimeout(timer);
        lifetime.removeEventListener("abort", onAbort);
        const held = this.waiting.get(key);
        held?.delete(release);
        if (held?.size === 0) this.waiting.delete(key);
        resolve(passed);
      };
      const release = () => end(true);
      const onAbort = () => end(false);
      const timer = setTimeout(release, ms);
      lifetime.addEventListener("abort", onAbort, { once: true });
      const held = this.waiting.get(key) ?? new Set();
      held.add(release);
      this.waiting.set(key, held);
    });
  }

  /** Ends the holds under `key`, or every hold without one; how many were ended. */
  release(key?: string): number {
    const ended =
      key === undefined ? [...this.waiting.values()].flatMap((s) => [...s]) : [...(this.waiting.get(key) ?? [])];
    for (const release of ended) release();
    return ended.length;
  }
}
