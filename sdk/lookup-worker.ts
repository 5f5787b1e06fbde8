import { sleep } from "@/lib/core/sleep";
import type { AnsweredLookup, Lookup, LookupAnswer, VerityClient } from "./client";

/**
 * A worker for a tool whose reconciliation is `worker`: it claims Verity's
 * questions about the tool's effects ("what does the provider hold under
 * this idempotency key?"), asks the provider the team's own way (`lookup`,
 * with the team's credentials, which Verity never holds), and answers with
 * evidence under the claim's fencing token.
 *
 *   runLookupWorker({ client, tool: "deploy.release", lookup: async (q) => …, signal })
 *
 * A worker killed while holding a lookup simply never answers: its claim's
 * lease runs out and another worker claims it with a greater fencing token,
 * which is why an answer from the killed worker's token, were it to arrive
 * late, is refused. A `lookup` that throws answers nothing, for the same
 * reason: the next claim asks again. Unanswered by the lookup's deadline,
 * the call goes to people (NEEDS_HUMAN).
 */
export interface LookupWorkerOptions {
  client: VerityClient;
  tool: string;
  /** Asks the provider about `question.idempotency_key` (the call's request is in `question.request`). */
  lookup: (question: Lookup) => Promise<LookupAnswer>;
  /** Stops the loop (between lookups; a lookup in progress is answered first). */
  signal: AbortSignal;
  /** How long a claim holds before another worker may take it; default 60 s. */
  leaseSeconds?: number;
  /** The wait after finding nothing to claim; default 1 s. */
  pollIntervalMs?: number;
  /** Told of each answer the server took (and how it reconciled the call). */
  onAnswered?: (answered: AnsweredLookup) => void;
  /** Told of a failed claim, lookup or answer; the loop goes on. */
  onError?: (error: unknown, lookup: Lookup | null) => void;
}

export async function runLookupWorker(options: LookupWorkerOptions): Promise<void> {
  const pollMs = options.pollIntervalMs ?? 1_000;
  while (!options.signal.aborted) {
    let claimed: Lookup | null = null;
    try {
      claimed = await options.client.claimLookup(options.tool, { leaseSeconds: options.leaseSeconds });
      if (!claimed) {
        await sleep(pollMs, options.signal);
        continue;
      }
      const answer = await options.lookup(claimed);
      // Answered first, told after: `onAnswered?.(await …)` would skip the answer itself when no one listens.
      const answered = await options.client.answerLookup(claimed, answer);
      options.onAnswered?.(answered);
    } catch (error) {
      options.onError?.(error, claimed);
      await sleep(pollMs, options.signal);
    }
  }
}
