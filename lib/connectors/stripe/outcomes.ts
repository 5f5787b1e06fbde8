import Stripe from "stripe";
import type { FailedOutcome, UnknownOutcome } from "@/lib/connectors/types";

/**
 * What an error from the `stripe` package says about Stripe's state, by the
 * rules of lib/connectors/types.ts. Stripe's own statement decides a failure
 * (its error body, parsed by the package into a typed error with the HTTP
 * status): a 4xx says this request applied nothing. Every 5xx is unknown —
 * Stripe's guidance is that the result of a 500 is indeterminate — and so is
 * a timeout, a broken connection and anything the package could not parse.
 */

/** Codes of a connection that provably never reached Stripe. */
const neverSentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);
const TIMEOUT_CODE = "ETIMEDOUT";

function codeOfDetail(detail: unknown): string | undefined {
  const code = (detail as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  const errors = (detail as { errors?: unknown } | null)?.errors;
  // Happy-eyeballs connects report an AggregateError of every address tried.
  if (Array.isArray(errors) && errors.length > 0) {
    const codes = errors.map((e) => (e as { code?: unknown }).code);
    if (codes.every((c) => typeof c === "string" && neverSentCodes.has(c))) return codes[0] as string;
  }
  return undefined;
}

type Lost = { kind: "not_sent" | "timeout" | "connection_lost"; message: string };

function connectionFailureOf(error: Stripe.errors.StripeConnectionError): Lost {
  const code = codeOfDetail(error.detail);
  if (code === TIMEOUT_CODE) return { kind: "timeout", message: error.message };
  if (code !== undefined && neverSentCodes.has(code))
    return { kind: "not_sent", message: `${error.message} (${code})` };
  return { kind: "connection_lost", message: `${error.message}${code ? ` (${code})` : ""}` };
}

function describe(error: Stripe.errors.StripeError): string {
  return [error.type, error.code, error.message].filter(Boolean).join(": ");
}

/** A create's error: failed only where Stripe stated that nothing was done. */
export function classifyStripeError(error: unknown): FailedOutcome | UnknownOutcome {
  if (!(error instanceof Stripe.errors.StripeError))
    return {
      kind: "unknown",
      reason: "unexpected_response",
      message: `the stripe package failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const lost = connectionFailureOf(error);
    switch (lost.kind) {
      case "not_sent":
        return { kind: "failed", reason: "unreachable", retryable: true, message: lost.message };
      case "timeout":
        return { kind: "unknown", reason: "timeout", message: lost.message };
      case "connection_lost":
        return { kind: "unknown", reason: "connection_lost", message: lost.message };
    }
  }
  const status = error.statusCode;
  const message = describe(error);
  const failed = (reason: FailedOutcome["reason"], retryable: boolean): FailedOutcome => ({
    kind: "failed",
    reason,
    retryable,
    message,
    ...(status !== undefined ? { httpStatus: status } : {}),
  });
  const unknown = (reason: UnknownOutcome["reason"]): UnknownOutcome => ({
    kind: "unknown",
    reason,
    message,
    ...(status !== undefined ? { httpStatus: status } : {}),
  });
  // Before the status: Stripe answers a reused key with a 400, which is no
  // statement that nothing exists under the key (the lookup says what does).
  if (error.rawType === "idempotency_error" || error instanceof Stripe.errors.StripeIdempotencyError)
    return status === 409 ? unknown("in_flight") : unknown("idempotency_key_reused");
  if (status === undefined) return unknown("unexpected_response");
  if (status >= 500) return unknown("server_error");
  switch (status) {
    case 400:
    case 413:
    case 415:
      return failed("invalid_request", false);
    case 402: // card_error, card_declined among them
    case 401:
    case 403:
    case 404:
      return failed("rejected", false);
    case 409:
      // Another request with the key is running; ours did nothing, but that one may commit any moment.
      return unknown("in_flight");
    case 429:
      return failed("rate_limited", true);
    default:
      return unknown("unexpected_response");
  }
}

/** A lookup's error: a lookup has no "failed"; whatever went wrong, the effect is still unknown. */
export function lookupUnknownOf(error: unknown): UnknownOutcome {
  if (error instanceof Stripe.errors.StripeConnectionError) {
    const lost = connectionFailureOf(error);
    return { kind: "unknown", reason: lost.kind === "not_sent" ? "unreachable" : lost.kind, message: lost.message };
  }
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode;
    return {
      kind: "unknown",
      reason: status !== undefined && status >= 500 ? "server_error" : "unexpected_response",
      message: `the lookup was answered with ${describe(error)}`,
      ...(status !== undefined ? { httpStatus: status } : {}),
    };
  }
  return {
    kind: "unknown",
    reason: "unexpected_response",
    message: `the stripe package failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}
