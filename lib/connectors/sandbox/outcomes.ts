import type { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import type { HttpExchange } from "@/lib/connectors/http-exchange";
import type { FailedOutcome, ProviderEvidence, UnknownOutcome } from "@/lib/connectors/types";
import { errorBodySchema, HEADER, listSchema, type ErrorCode } from "@/lib/connectors/sandbox/contract";

/**
 * The classification rules for the sandbox provider's answers, shared by its
 * payment and CRM connectors. The rule for a definite failure: the provider's
 * own error body (`{error: {type, code, message}}`) must state it. A status
 * code alone is never enough (a proxy can send a 400 or 503 too), and among
 * 5xx only `not_processed` says that nothing was stored; `internal_error`, a
 * 5xx without the sandbox's error body, and anything that does not parse are
 * unknown.
 */

export const SANDBOX_PROVIDER = "sandbox";

export interface CallSite {
  operation: string;
  idempotencyKey: string;
}

type Exchanged = Extract<HttpExchange, { kind: "response" }>;

export function evidenceOf(ex: Exchanged, site: CallSite): ProviderEvidence {
  return {
    provider: SANDBOX_PROVIDER,
    operation: site.operation,
    idempotencyKey: site.idempotencyKey,
    httpStatus: ex.status,
    providerRequestId: ex.headers.get(HEADER.requestId),
    replayed: ex.headers.get(HEADER.replayed) === "true",
    receivedAt: ex.receivedAt.toISOString(),
    bodyDigest: digestOf(ex.json ?? ex.text),
  };
}

/** What an error code, stated by the provider, means for the request that got it. */
function outcomeOfErrorCode(code: ErrorCode, status: number, message: string): FailedOutcome | UnknownOutcome {
  const failed = (reason: FailedOutcome["reason"], retryable: boolean): FailedOutcome => ({
    kind: "failed",
    reason,
    retryable,
    message,
    httpStatus: status,
  });
  switch (code) {
    case "parameter_invalid":
    case "idempotency_key_missing":
    case "payload_too_large":
    case "unsupported_media_type":
      return failed("invalid_request", false);
    case "idempotency_key_reused":
      // Under one key per call, a key reused with other parameters means an
      // effect already exists under it: reconciled by lookup, never a known
      // failure that would let the task fail over a refund that was made.
      return { kind: "unknown", reason: "idempotency_key_reused", message, httpStatus: status };
    case "resource_missing":
    case "release_not_deployed":
    case "method_not_allowed":
    case "reset_disabled":
      return failed("rejected", false);
    case "not_processed":
      return failed("not_processed", true);
    case "idempotency_key_in_use":
      // Our request did nothing, but the one holding the key may commit any moment.
      return { kind: "unknown", reason: "in_flight", message, httpStatus: status };
    case "internal_error":
      return { kind: "unknown", reason: "server_error", message, httpStatus: status };
  }
}

function unknownOfStatus(ex: Exchanged, what: string): UnknownOutcome {
  return ex.status >= 500
    ? {
        kind: "unknown",
        reason: "server_error",
        message: `${ex.status} without the provider's error body`,
        httpStatus: ex.status,
      }
    : {
        kind: "unknown",
        reason: "unexpected_response",
        message: `${what}: ${ex.status} ${ex.text.slice(0, 200)}`,
        httpStatus: ex.status,
      };
}

/**
 * A create. `check` parses the 2xx body and compares it with what was asked:
 * a success the connector cannot tie to its own request is no evidence.
 */
export function classifyCreate<T>(
  ex: HttpExchange,
  site: CallSite,
  check: (json: unknown) => { ok: true; value: T } | { ok: false; why: string },
): { kind: "succeeded"; value: T; evidence: ProviderEvidence } | FailedOutcome | UnknownOutcome {
  switch (ex.kind) {
    case "not_sent":
      return { kind: "failed", reason: ex.reason, retryable: true, message: ex.message };
    case "lost":
      return { kind: "unknown", reason: ex.reason, message: ex.message };
    case "response": {
      if (ex.status >= 200 && ex.status < 300) {
        const checked = check(ex.json);
        if (!checked.ok)
          return { kind: "unknown", reason: "unexpected_response", message: checked.why, httpStatus: ex.status };
        return { kind: "succeeded", value: checked.value, evidence: evidenceOf(ex, site) };
      }
      const error = errorBodySchema.safeParse(ex.json);
      if (!error.success) return unknownOfStatus(ex, "an answer without the provider's error body");
      return outcomeOfErrorCode(error.data.error.code, ex.status, error.data.error.message);
    }
  }
}

/**
 * A lookup by idempotency key. "not_found" only from a complete, well-formed
 * empty list for a key no request is processing; everything else is unknown.
 */
export function classifyLookup<I extends z.ZodType<{ idempotency_key: string }>, T>(
  ex: HttpExchange,
  site: CallSite,
  item: I,
  toValue: (item: z.infer<I>) => T,
):
  | { kind: "found"; value: T; evidence: ProviderEvidence }
  | { kind: "not_found"; evidence: ProviderEvidence }
  | UnknownOutcome {
  switch (ex.kind) {
    case "not_sent":
      return { kind: "unknown", reason: ex.reason === "unreachable" ? "unreachable" : "aborted", message: ex.message };
    case "lost":
      return { kind: "unknown", reason: ex.reason, message: ex.message };
    case "response": {
      if (ex.status !== 200) {
        const error = errorBodySchema.safeParse(ex.json);
        if (error.success && error.data.error.code === "internal_error")
          return { kind: "unknown", reason: "server_error", message: error.data.error.message, httpStatus: ex.status };
        return unknownOfStatus(ex, "the lookup was answered with");
      }
      const list = listSchema(item).safeParse(ex.json);
      if (!list.success)
        return {
          kind: "unknown",
          reason: "unexpected_response",
          message: `the lookup's list does not parse: ${list.error.message}`,
          httpStatus: ex.status,
        };
      const [first, ...rest] = list.data.data;
      if (first === undefined) {
        if (list.data.in_flight)
          return {
            kind: "unknown",
            reason: "in_flight",
            message: `a request with key ${site.idempotencyKey} is still being processed`,
            httpStatus: ex.status,
          };
        return { kind: "not_found", evidence: evidenceOf(ex, site) };
      }
      if (rest.length > 0 || first.idempotency_key !== site.idempotencyKey) {
        return {
          kind: "unknown",
          reason: "unexpected_response",
          message: `the lookup for key ${site.idempotencyKey} returned ${list.data.data.length} item(s) that do not match it`,
          httpStatus: ex.status,
        };
      }
      return { kind: "found", value: toValue(first), evidence: evidenceOf(ex, site) };
    }
  }
}
