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
export async function withLease<T>(api: LeaseApi, taskId: string, fn: (lease: LeaseHandle) => Promise<T>, options: WithLeaseOptions = {}): Promise<T> {
  const ttlSeconds = options.ttlSeconds ?? 30;
  const renewEveryMs = options.renewEveryMs ?? Math.max(250, (ttlSeconds * 1000) / 3);
  let current = await api.acquireLease(taskId, { ttlSeconds });
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
