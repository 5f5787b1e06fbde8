import type { IncomingMessage } from "node:http";
import {
  HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  type SandboxNote,
  type SandboxRefund,
  type SandboxRelease,
  type SandboxRollback,
} from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { headerOf, sendError, sendJson, SandboxHttpError } from "@/programs/sandbox/http";
import { JournalUnavailableError, type Namespace } from "@/programs/sandbox/journal";
import { sleep } from "@/lib/core/sleep";

/**
 * The path of every effect the sandbox applies, with the fault points where
 * a real provider can fail around its commit:
 *
 *   claim key ─▶ latency ─▶ [error_before_commit] ─▶ commit (fsync) ─▶ webhook
 *     ─▶ [error_after_commit | timeout_after_commit | drop_response] ─▶ 200
 *
 * A replay (same key, same parameters, already committed) skips the commit
 * but not the network: its stored response goes through the same faults, as
 * a retry's answer can be lost as easily as the first one.
 *
 * Only a 503 `not_processed` is sent when nothing was stored; every answer
 * after the commit either carries the effect or leaves the client not
 * knowing, which is the situation Verity's reconciliation exists for.
 */

export function idempotencyKeyOf(req: IncomingMessage): string {
  const key = headerOf(req, HEADER.idempotencyKey)?.trim();
  if (!key) {
    throw new SandboxHttpError(
      400,
      "invalid_request_error",
      "idempotency_key_missing",
      `Every POST needs an ${HEADER.idempotencyKey} header.`,
      HEADER.idempotencyKey,
    );
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new SandboxHttpError(
      400,
      "invalid_request_error",
      "parameter_invalid",
      `${HEADER.idempotencyKey} is at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`,
      HEADER.idempotencyKey,
    );
  }
  return key;
}

export interface Mutation<T extends SandboxRefund | SandboxNote | SandboxRelease | SandboxRollback> {
  namespace: Namespace;
  key: string;
  /** Digest of method, path and parameters: what "the same request" means. */
  fingerprint: string;
  build: () => T;
  /** Runs once, right after the commit, whatever the response will be. */
  afterCommit?: (body: T) => void;
  /** The stored body as this surface puts it on the wire (the Stripe surface: Stripe's refund object); as stored by default. */
  present?: (body: T) => unknown;
  /** A key in use, or reused with other parameters, in this surface's error shape; the sandbox's 409s by default. */
  conflict?: (kind: "mismatch" | "in_flight", key: string) => { status: number; body: unknown };
}

export async function runIdempotentMutation<T extends SandboxRefund | SandboxNote | SandboxRelease | SandboxRollback>(
  ctx: SandboxContext,
  rc: RequestContext,
  m: Mutation<T>,
): Promise<void> {
  const claim = ctx.store.keys.claim(m.namespace, m.key, m.fingerprint);
  const present = m.present ?? ((body: T) => body);
  if (m.conflict && (claim.kind === "mismatch" || claim.kind === "in_flight")) {
    if (claim.kind === "mismatch") ctx.counters.keyMismatches++;
    else ctx.counters.inFlightConflicts++;
    const answer = m.conflict(claim.kind, m.key);
    return sendJson(rc.res, answer.status, answer.body);
  }
  switch (claim.kind) {
    case "replay":
      ctx.counters.replays++;
      // The stored response travels the same faulty network as a first answer.
      if (!(await sleep(rc.plan.latencyMs, ctx.lifetime))) return void rc.res.destroy();
      // Stored under this fingerprint, so by this surface: the body is its T.
      return deliver(rc, claim.response.status, present(claim.response.body as T), { [HEADER.replayed]: "true" });
    case "mismatch":
      ctx.counters.keyMismatches++;
      return sendError(
        rc.res,
        new SandboxHttpError(
          409,
          "idempotency_error",
          "idempotency_key_reused",
          `Keys for idempotent requests can only be used with the same parameters they were first used with; ${m.key} was used with others.`,
          HEADER.idempotencyKey,
        ),
      );
    case "in_flight":
      ctx.counters.inFlightConflicts++;
      return sendError(
        rc.res,
        new SandboxHttpError(
          409,
          "idempotency_error",
          "idempotency_key_in_use",
          `A request with ${HEADER.idempotencyKey} ${m.key} is still being processed; look it up or retry later.`,
          HEADER.idempotencyKey,
        ),
      );
    case "claimed":
      break;
  }

  let body: T;
  let committing = false;
  try {
    if (!(await ctx.held.wait(rc.plan.latencyMs, m.key, ctx.lifetime))) {
      // Closing: stop before the commit, like a provider killed mid-request.
      ctx.store.keys.release(m.namespace, m.key);
      rc.res.destroy();
      return;
    }
    if (rc.plan.outcome === "error_before_commit") {
      ctx.store.keys.release(m.namespace, m.key);
      return sendError(
        rc.res,
        notProcessed("The request was not processed (injected error_before_commit); nothing was stored."),
      );
    }
    body = m.build();
    committing = true;
    await ctx.store.commit(m.namespace, m.key, m.fingerprint, body);
  } catch (error) {
    if (!committing || error instanceof JournalUnavailableError) {
      ctx.store.keys.release(m.namespace, m.key);
      if (error instanceof JournalUnavailableError) return sendError(rc.res, notProcessed(error.message));
      throw error;
    }
    // The journal write failed part-way: the record may be on disk or not.
    // The key stays claimed (retries get 409 in use) until a restart replays
    // what really is durable; releasing it could apply the effect twice.
    ctx.log.error({ err: error }, "journal write failed, the journal is now read-only");
    return sendError(rc.res, internalError());
  }

  m.afterCommit?.(body);
  deliver(rc, 200, present(body));
}

/**
 * Sends a committed (or replayed) response through the outcome faults. On a
 * replay, error_before_commit is still a truthful 503 not_processed: this
 * request applied nothing, whatever an earlier one with the key did.
 */
export function deliver(rc: RequestContext, status: number, body: unknown, headers: Record<string, string> = {}): void {
  switch (rc.plan.outcome) {
    case "error_before_commit":
      return sendError(rc.res, notProcessed("The request was not processed (injected error_before_commit)."));
    case "error_after_commit":
      return sendError(rc.res, internalError());
    case "timeout_after_commit":
      // Never answered: the client's own timeout ends it, or close() does.
      return;
    case "drop_response":
      rc.req.socket.destroy();
      return;
    case null:
      return sendJson(rc.res, status, body, headers);
  }
}

export function internalError(): SandboxHttpError {
  return new SandboxHttpError(
    500,
    "api_error",
    "internal_error",
    "An internal error occurred; the request may or may not have been applied.",
  );
}

export function notProcessed(message: string): SandboxHttpError {
  return new SandboxHttpError(
    503,
    "api_error",
    "not_processed",
    `${message} Retrying with the same ${HEADER.idempotencyKey} is safe.`,
  );
}
