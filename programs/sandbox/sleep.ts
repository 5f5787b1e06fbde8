import { setTimeout as delay } from "node:timers/promises";

/**
 * Waits `ms`, or less if `signal` aborts (the sandbox is closing). Resolves
 * to whether the full wait happened, so callers stop instead of finishing
 * work after close.
 */
export async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
