import type { Namespace } from "@/programs/sandbox/journal";

/**
 * Stripe-style idempotency keys, in memory. A key is claimed before any work
 * starts, so of two concurrent requests with the same key exactly one runs;
 * the other is told the key is in use. A completed key keeps the request's
 * fingerprint and the stored response: the same request again gets that
 * response, a different request with the key is refused.
 *
 * Claim-and-check is one synchronous step on a Map (one JS thread), which is
 * what makes it race-free: there is no await between the look and the set.
 * Nothing here is durable; SandboxStore makes a completion durable before
 * calling `complete`.
 */

export interface StoredResponse {
  status: number;
  body: unknown;
}

type Entry =
  { state: "in_flight"; fingerprint: string } | { state: "completed"; fingerprint: string; response: StoredResponse };

export type Claim =
  { kind: "claimed" } | { kind: "replay"; response: StoredResponse } | { kind: "mismatch" } | { kind: "in_flight" };

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  private static id(namespace: Namespace, key: string): string {
    return `${namespace}\u0000${key}`;
  }

  claim(namespace: Namespace, key: string, fingerprint: string): Claim {
    const id = IdempotencyStore.id(namespace, key);
    const entry = this.entries.get(id);
    if (!entry) {
      this.entries.set(id, { state: "in_flight", fingerprint });
      return { kind: "claimed" };
    }
    // A different request is refused whether or not the first one is done:
    // that is the more useful error for the client, and both are 409s.
    if (entry.fingerprint !== fingerprint) return { kind: "mismatch" };
    return entry.state === "completed" ? { kind: "replay", response: entry.response } : { kind: "in_flight" };
  }

  /** Gives up a claim that stored nothing, so a retry with the key runs again. */
  release(namespace: Namespace, key: string): void {
    const id = IdempotencyStore.id(namespace, key);
    if (this.entries.get(id)?.state === "in_flight") this.entries.delete(id);
  }

  /**
   * Records the response of a claimed key, or of a key replayed from the
   * journal. A second completion of a key would be a second effect under one
   * key: that is a bug (or a corrupt journal), never something to overwrite.
   */
  complete(namespace: Namespace, key: string, fingerprint: string, response: StoredResponse): void {
    const id = IdempotencyStore.id(namespace, key);
    if (this.entries.get(id)?.state === "completed")
      throw new Error(`idempotency key ${key} in ${namespace} was completed twice`);
    this.entries.set(id, { state: "completed", fingerprint, response });
  }

  isInFlight(namespace: Namespace, key: string): boolean {
    return this.entries.get(IdempotencyStore.id(namespace, key))?.state === "in_flight";
  }

  clear(): void {
    this.entries.clear();
  }
}
