import { sleep } from "@/lib/core/sleep";
import { isVerityApiError } from "./errors";
import type { Lease } from "./types";

/** What withLease needs of the client. */
export interface LeaseApi {
  acquireLease(taskId: string, options?: { ttlSeconds?: number }): Promise<Lease>;
  renewLease(taskId: string, fencingToken: string, options?: { ttlSeconds?: number }): Promise<Lease>;
  releaseLease(taskId: string, fencingToken: string): Promise<void>;
}

export interface WithLeaseOptions {
  /** Default 30. */
  ttlSeconds?: number;
  /** Default a third of the TTL: two renewals can fail before the lease lapses. */
  renewEveryMs?: number;
  /** A renewal that failed without losing the lease (a network error): the next one tries again. */
  onRenewError?: (error: unknown) => void;
  /**
   * How long to wait for a live lease held by someone else to expire before
   * giving up with its lease_conflict. Default 0: give up at once. A worker
   * restarted after a crash sets it to the lease TTL: its dead predecessor's
   * lease cannot be told from a live process's, so only its expiry frees the
   * task. A live holder that keeps renewing outlasts the wait.
   */
  waitMs?: number;
  /** Called before each wait, with the lease_conflict being waited out. */
  onWait?: (conflict: unknown, untilMs: number) => void;
}

/** The expiry a lease_conflict names (problem extension `expires_at`), in ms since the epoch. */
function expiryOf(error: unknown): number | undefined {
  if (!isVerityApiError(error, "lease_conflict")) return undefined;
  const at = error.problem.expires_at;
  const ms = typeof at === "string" ? Date.parse(at) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Acquires the lease, waiting out a live one for up to `waitMs`: until the
 * expiry the conflict names (plus a margin for clock skew), then again.
 */
export async function acquireLeaseWaiting(
  api: LeaseApi,
  taskId: string,
  ttlSeconds: number,
  options: Pick<WithLeaseOptions, "waitMs" | "onWait"> = {},
): Promise<Lease> {
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    try {
      return await api.acquireLease(taskId, { ttlSeconds });
    } catch (error) {
      const expiry = expiryOf(error);
      if (expiry === undefined || expiry > deadline) throw error;
      const until = Math.min(deadline, Math.max(expiry, Date.now()) + 250);
      options.onWait?.(error, until);
      await sleep(Math.max(50, until - Date.now()));
    }
  }
}

export interface LeaseHandle {
  taskId: string;
  /** Send with every write. */
  readonly fencingToken: string;
  /** The latest answer of acquire or renew. */
  readonly lease: Lease;
  /**
   * Aborted when a renewal is refused (the lease expired and someone else may
   * hold the task): stop writing. Writes are fenced by the server anyway;
   * this only saves work that would be refused.
   */
  readonly signal: AbortSignal;
}

/**
 * Holds a task's lease while `fn` runs: acquired first, renewed in the
 * background, released in `finally` (also when `fn` throws), so the next
 * worker does not wait for the TTL. If the process dies instead, the lease
 * simply expires.
 */
export async function withLease<T>(
  api: LeaseApi,
  taskId: string,
  fn: (lease: LeaseHandle) => Promise<T>,
  options: WithLeaseOptions = {},
): Promise<T> {
  const ttlSeconds = options.ttlSeconds ?? 30;
  const renewEveryMs = options.renewEveryMs ?? Math.max(250, (ttlSeconds * 1000) / 3);
  let current = await acquireLeaseWaiting(api, taskId, ttlSeconds, options);
  const lost = new AbortController();
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let renewing: Promise<void> = Promise.resolve();

  const schedule = () => {
    if (stopped || lost.signal.aborted) return;
    timer = setTimeout(() => {
      renewing = (async () => {
        try {
          current = await api.renewLease(taskId, current.fencing_token, { ttlSeconds });
        } catch (error) {
          if (isVerityApiError(error, "lease_conflict")) lost.abort(error);
          else options.onRenewError?.(error);
        }
        schedule();
      })();
    }, renewEveryMs);
    // The renewal alone must not keep a finished process alive.
    timer.unref?.();
  };
  schedule();

  const handle: LeaseHandle = {
    taskId,
    get fencingToken() {
      return current.fencing_token;
    },
    get lease() {
      return current;
    },
    signal: lost.signal,
  };
  try {
    return await fn(handle);
  } finally {
    stopped = true;
    clearTimeout(timer);
    await renewing;
    if (!lost.signal.aborted) {
      // Best effort: a release that does not arrive costs the next worker one TTL, nothing more.
      await api.releaseLease(taskId, current.fencing_token).catch(() => undefined);
    }
  }
}
