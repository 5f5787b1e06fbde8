/**
 * Connectors: how Verity causes effects in external systems, and finds out
 * afterwards whether it did. Every effect carries an idempotency key derived
 * from its execution, and every outcome is classified into exactly one of
 * three kinds, because the engine's recovery rules differ for each:
 *
 *   succeeded  the provider answered with the effect, and it matches what was
 *              asked (key, amount, execution id). `evidence` is what the
 *              engine records as proof (audit Invariant 4).
 *   failed     the provider stated that THIS request applied nothing: a
 *              validation error, a refusal, or an explicit "not processed". It says nothing about an earlier
 *              request under the same key (that one may have succeeded), so
 *              after an earlier unknown the engine still reconciles first.
 *              `retryable`: a retry with the same key may succeed.
 *   unknown    anything else: a timeout, a lost connection, a 5xx without an
 *              explicit "not processed", a response that does not parse or
 *              does not match, or the key already used with other
 *              parameters (under one key per call, something is already
 *              stored under it: the lookup says what). The effect may or may not exist. The engine
 *              must not repeat the effect under a new key; it looks it up
 *              (lookup* below) and, while that is unknown too, retries only
 *              with the same key or asks a human (audit Invariant 5).
 *
 * A timeout or a lost response is ALWAYS unknown. Connectors never throw for
 * I/O; they throw only for a programming error such as a missing key.
 *
 * A real provider plugs in by implementing the same interfaces: a Stripe
 * PaymentConnector would send the key as Stripe's `Idempotency-Key`, put
 * execution_id/task_id in `metadata`, classify 4xx with Stripe's error body
 * as failed (402 card_declined not retryable, 429 rate_limit retryable), and
 * every 5xx, timeout or reset as unknown (Stripe's own guidance: the result
 * of a 500 is indeterminate). Stripe has no lookup by idempotency key, so its
 * lookupRefund would search refunds of the charge for
 * metadata.idempotency_key (written on create for this purpose), and treat
 * "not found" as final only after its requests can no longer be in flight.
 */

export interface ExecutionMetadata {
  /** The Verity execution that causes the effect; the provider stores it, so a lookup can tie the effect back. */
  executionId: string;
  taskId: string;
}

export interface Refund {
  /** The provider's id (re_…). */
  id: string;
  status: "succeeded";
  amountCents: number;
  currency: string;
  chargeId: string;
  customerId: string;
  /** As the provider stored it, e.g. {execution_id, task_id}. */
  metadata: Record<string, string>;
  idempotencyKey: string;
  createdAt: string;
}

export interface Note {
  id: string;
  customerId: string;
  text: string;
  metadata: Record<string, string>;
  idempotencyKey: string;
  createdAt: string;
}

/** What the provider said, recorded as proof of an outcome. */
export interface ProviderEvidence {
  /** "sandbox", "stripe", … */
  provider: string;
  /** e.g. "refunds.create", "refunds.lookup" */
  operation: string;
  idempotencyKey: string;
  httpStatus: number;
  /** The provider's id of this request (Request-Id), to quote in a support ticket. */
  providerRequestId: string | null;
  /** The provider answered with the stored result of an earlier request with the key. */
  replayed: boolean;
  receivedAt: string;
  /** sha256 of the canonical JSON of the provider's response body. */
  bodyDigest: string;
}

export const failureReasons = [
  "invalid_request", // 400/413/415: the request itself is wrong
  "rejected", // 401/403/404 and other refusals stated by the provider
  "rate_limited", // 429
  "not_processed", // 503 with the provider's explicit "nothing was stored"
  "unreachable", // the connection was refused or the host unknown: the request never left
  "cancelled", // the caller's signal was aborted before the request was sent
] as const;
export type FailureReason = (typeof failureReasons)[number];

export const unknownReasons = [
  "timeout", // no complete answer within timeoutMs
  "connection_lost", // the connection broke after the request may have been sent
  "aborted", // the caller's signal aborted after the request may have been sent
  "server_error", // a 5xx without an explicit "not processed"
  "in_flight", // another request with the key is still running at the provider
  "unexpected_response", // an answer that does not parse, or does not match the request
  // 409: the key was first used with other parameters. This request applied
  // nothing, but every attempt of a call shares its one key and request, so
  // an effect is already stored under it (by an execution this ledger lost,
  // or not ours at all): the lookup, not this answer, says what happened.
  "idempotency_key_reused",
  "unreachable", // lookups only: the provider could not be asked
  // Lookups of registered tools (lib/use-cases/tools/look-up-effect.ts):
  "bad_signature", // the tool owner's answer was unsigned or signed with another secret: not its word
  "lookup_pending", // a worker lookup is queued or claimed and not yet answered: wait, do not escalate
  "lookup_expired", // no worker answered before the lookup's deadline
  "manual", // the tool's reconciliation is manual: nobody but a person can say
] as const;
export type UnknownReason = (typeof unknownReasons)[number];

export interface FailedOutcome {
  kind: "failed";
  reason: FailureReason;
  retryable: boolean;
  message: string;
  httpStatus?: number;
}

export interface UnknownOutcome {
  kind: "unknown";
  reason: UnknownReason;
  message: string;
  httpStatus?: number;
}

export type RefundOutcome =
  { kind: "succeeded"; refund: Refund; evidence: ProviderEvidence } | FailedOutcome | UnknownOutcome;
export type NoteOutcome =
  { kind: "succeeded"; note: Note; evidence: ProviderEvidence } | FailedOutcome | UnknownOutcome;

/** A lookup has no "failed": if it cannot say, the effect is still unknown. */
export type RefundLookup =
  | { kind: "found"; refund: Refund; evidence: ProviderEvidence }
  | { kind: "not_found"; evidence: ProviderEvidence }
  | UnknownOutcome;
export type NoteLookup =
  | { kind: "found"; note: Note; evidence: ProviderEvidence }
  | { kind: "not_found"; evidence: ProviderEvidence }
  | UnknownOutcome;

export interface CallOptions {
  /** Give up waiting after this long; the outcome is then unknown. */
  timeoutMs?: number;
  /** The caller's cancellation; after the request left, the outcome is unknown. */
  signal?: AbortSignal;
}

export interface RefundRequest {
  idempotencyKey: string;
  amountCents: number;
  /** ISO 4217, lower case (usd). */
  currency: string;
  chargeId: string;
  customerId: string;
  metadata: ExecutionMetadata;
}

export interface NoteRequest {
  idempotencyKey: string;
  customerId: string;
  text: string;
  metadata: ExecutionMetadata;
}

/**
 * What a lookup may use besides the key. A provider with a lookup by key (the
 * sandbox) needs neither; Stripe has none, so its connector searches the
 * charge's refunds, and while the last request under the key may still be
 * processing an empty search is not yet "not found".
 */
export interface RefundLookupScope {
  /** The charge the refund is for. */
  chargeId?: string;
  /** When the last request under the key was sent; null when it never was. */
  sentAt?: Date | null;
}

export interface PaymentConnector {
  readonly provider: string;
  refund(request: RefundRequest, options?: CallOptions): Promise<RefundOutcome>;
  /** What the provider holds under the key: the reconciler's question after an unknown. */
  lookupRefund(idempotencyKey: string, options?: CallOptions, scope?: RefundLookupScope): Promise<RefundLookup>;
}

export interface CrmConnector {
  readonly provider: string;
  addNote(request: NoteRequest, options?: CallOptions): Promise<NoteOutcome>;
  lookupNote(idempotencyKey: string, options?: CallOptions): Promise<NoteLookup>;
}
