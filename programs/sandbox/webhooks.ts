import { HEADER, type WebhookEvent } from "@/lib/connectors/sandbox/contract";
import { sleep } from "@/lib/core/sleep";
import { signWebhook } from "@/lib/connectors/sandbox/webhook-signature";

/**
 * Webhook delivery after a commit: best effort, at least once, never on the
 * path of the API response. Each delivery is retried with exponential
 * backoff on a network error or a non-2xx answer, and given up after
 * `attempts`. A receiver must therefore deduplicate by event id, which is
 * exactly what the duplicate_webhook fault checks: it delivers the same
 * event (same id, same body) twice.
 *
 * With a secret, each attempt is signed like Stripe's webhooks:
 * `Sandbox-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.
 * Nothing is durable here: deliveries pending when the sandbox stops are lost,
 * as a receiver must expect of any provider.
 */

export interface WebhookSenderOptions {
  secret?: string;
  attempts?: number;
  baseDelayMs?: number;
  timeoutMs?: number;
  /** Aborted when the sandbox closes: pending deliveries stop. */
  signal: AbortSignal;
}

export interface WebhookStats {
  /** Deliveries answered with a 2xx (a duplicated event counts twice). */
  delivered: number;
  /** Deliveries given up after every attempt failed. */
  failed: number;
  /** HTTP attempts, retries included. */
  attempts: number;
}

export class WebhookSender {
  private readonly pending = new Set<Promise<void>>();
  private readonly counters: WebhookStats = { delivered: 0, failed: 0, attempts: 0 };
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: WebhookSenderOptions) {
    this.attempts = options.attempts ?? 4;
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /** Queues the event; `copies` 2 is the duplicate_webhook fault, delivered one after the other. */
  send(url: string, event: WebhookEvent, copies: 1 | 2 = 1): void {
    const secret = this.options.secret;
    this.sendSigned(
      url,
      JSON.stringify(event),
      (body, t): Record<string, string> => (secret ? { [HEADER.signature]: signWebhook(secret, body, t) } : {}),
      copies,
    );
  }

  /**
   * Any body with the headers `sign` makes for each attempt (at its own
   * time): the Stripe surface's events go this way, with Stripe-Signature.
   */
  sendSigned(
    url: string,
    body: string,
    sign: (body: string, timestampSeconds: number) => Record<string, string>,
    copies: 1 | 2 = 1,
  ): void {
    const run = (async () => {
      for (let i = 0; i < copies; i++) await this.deliver(url, body, sign);
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
  }

  stats(): WebhookStats {
    return { ...this.counters };
  }

  resetStats(): void {
    Object.assign(this.counters, { delivered: 0, failed: 0, attempts: 0 });
  }

  /** Resolves when nothing is pending (also after close aborted them). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async deliver(
    url: string,
    body: string,
    sign: (body: string, timestampSeconds: number) => Record<string, string>,
  ): Promise<void> {
    const { signal } = this.options;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      if (signal.aborted) return;
      this.counters.attempts++;
      try {
        const headers: Record<string, string> = {
          "Content-Type": "application/json",
          "User-Agent": "verity-sandbox-webhooks",
          ...sign(body, Math.floor(Date.now() / 1000)),
        };
        const res = await fetch(url, {
          method: "POST",
          headers,
          body,
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          this.counters.delivered++;
          return;
        }
      } catch {
        // A network error or timeout: retried like a non-2xx answer.
      }
      if (attempt < this.attempts && !(await sleep(this.baseDelayMs * 2 ** (attempt - 1), signal))) return;
    }
    this.counters.failed++;
  }
}
