import Stripe from "stripe";
import { digestOf } from "@/lib/core/canonical-json";
import { inSpan, SpanKind, withTraceHeaders } from "@/lib/config/tracing";
import { assertEffectIdentity } from "@/lib/connectors/sandbox/options";
import { classifyStripeError, lookupUnknownOf } from "@/lib/connectors/stripe/outcomes";
import type {
  CallOptions,
  PaymentConnector,
  ProviderEvidence,
  Refund,
  RefundLookup,
  RefundLookupScope,
  RefundOutcome,
  RefundRequest,
  UnknownOutcome,
} from "@/lib/connectors/types";

/**
 * PaymentConnector over Stripe's API, through the official `stripe` package.
 * Refunds are created with the execution's key as Stripe's Idempotency-Key
 * and with metadata {execution_id, task_id, idempotency_key}: Stripe has no
 * lookup by idempotency key, so the key is written where a search can find
 * it. The outcome rules (which Stripe answers are failed, which unknown) are
 * in ./outcomes.ts, following lib/connectors/types.ts.
 */

export const STRIPE_PROVIDER = "stripe";

export interface StripeConnectorOptions {
  apiKey: string;
  /** https://api.stripe.com (the default), or the sandbox's http://127.0.0.1:4010/stripe. */
  apiBase?: string;
  /** Per request; the outcome of a create that takes longer is unknown. */
  timeoutMs?: number;
  /**
   * How long after it was sent a request under a key may still be processing
   * at Stripe. Until then an empty search is unknown (in flight), after it
   * "not found". A premature "not found" is still safe while the key is
   * alive: the retry that follows goes under the same key, so Stripe answers
   * it with the first request's refund.
   */
  inFlightMs?: number;
  /** Extra headers on creates (the sandbox's X-Sandbox-Fault in tests); never needed with Stripe itself. */
  headers?: Record<string, string>;
  /** Extra headers on lookups. */
  lookupHeaders?: Record<string, string>;
}

export const DEFAULT_STRIPE_TIMEOUT_MS = 30_000;
/** Pages of 100 searched when the charge is not known: past that, the lookup says it cannot tell. */
const MAX_UNSCOPED_PAGES = 50;

/** Stripe's path prefix is fixed at /v1 inside the package; an API base with a path (the sandbox's /stripe) is prepended here. */
function prefixedHttpClient(basePath: string): Stripe.HttpClient {
  const inner = Stripe.createNodeHttpClient();
  if (basePath === "") return inner;
  return {
    getClientName: () => inner.getClientName(),
    makeRequest: (host, port, path, method, headers, body, protocol, timeout) =>
      inner.makeRequest(host, port, `${basePath}${path}`, method, headers, body, protocol, timeout),
  } as Stripe.HttpClient;
}

function stripeClient(options: StripeConnectorOptions): Stripe {
  const base = new URL(options.apiBase ?? "https://api.stripe.com");
  const protocol = base.protocol === "http:" ? "http" : "https";
  return new Stripe(options.apiKey, {
    host: base.hostname,
    port: base.port || (protocol === "http" ? 80 : 443),
    protocol,
    httpClient: prefixedHttpClient(base.pathname.replace(/\/+$/, "")),
    // The engine owns retries: it decides, with its ledger, whether another attempt is safe.
    maxNetworkRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_STRIPE_TIMEOUT_MS,
    telemetry: false,
    appInfo: { name: "verity" },
  });
}

type StripeRefund = Stripe.Refund;

/** The fields of Stripe's refund the connector reads: the package's own type, or an event's payload parsed by ./webhooks.ts. */
export interface StripeRefundFields {
  id: string;
  amount: number;
  currency: string;
  charge: string | { id: string } | null;
  customer?: string | { id: string } | null;
  metadata: Record<string, string> | null;
  created: number;
  status?: string | null;
  failure_reason?: string;
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  return typeof value === "string" ? value : (value?.id ?? null);
}

/**
 * Stripe's refund in the engine's vocabulary. The customer is Stripe's when
 * the refund names one; for a charge without a customer it is the one Verity
 * wrote into metadata, which proves nothing and is documented as such.
 */
export function refundFromStripe(r: StripeRefundFields): Refund {
  const metadata = { ...(r.metadata ?? {}) };
  return {
    id: r.id,
    status: "succeeded",
    amountCents: r.amount,
    currency: r.currency,
    chargeId: idOf(r.charge) ?? "",
    customerId: idOf(r.customer) ?? metadata.customer_id ?? "",
    metadata,
    idempotencyKey: metadata.idempotency_key ?? "",
    createdAt: new Date(r.created * 1000).toISOString(),
  };
}

function evidenceOf(
  operation: string,
  idempotencyKey: string,
  response: Stripe.Response<unknown>,
  body: unknown,
): ProviderEvidence {
  const last = response.lastResponse;
  return {
    provider: STRIPE_PROVIDER,
    operation,
    idempotencyKey,
    httpStatus: last.statusCode,
    providerRequestId: last.requestId ?? null,
    replayed: last.headers["idempotent-replayed"] === "true",
    receivedAt: new Date().toISOString(),
    bodyDigest: digestOf(body),
  };
}

/** A refund that Stripe has not finished is not a success yet, and not a failure: a lookup later says which. */
export function unsettledOf(r: StripeRefundFields, status?: number): UnknownOutcome | null {
  switch (r.status) {
    case "succeeded":
      return null;
    case "pending":
    case "requires_action":
      return {
        kind: "unknown",
        reason: "in_flight",
        message: `refund ${r.id} is ${r.status} at Stripe`,
        httpStatus: status,
      };
    default:
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message: `refund ${r.id} is ${r.status ?? "without a status"} at Stripe${r.failure_reason ? ` (${r.failure_reason})` : ""}: people decide`,
        httpStatus: status,
      };
  }
}

/**
 * The caller's signal, which the package does not take: an abort before the
 * request leaves is a cancellation, after it the request goes on at Stripe
 * and its outcome is unknown.
 */
async function withCallerSignal<T>(signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T | "aborted"> {
  if (!signal) return run();
  const call = run();
  let onAbort: () => void = () => {};
  const aborted = new Promise<"aborted">((resolve) => {
    onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([call, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
    // The abandoned call's rejection is nobody's to handle.
    call.catch(() => undefined);
  }
}

export class StripePaymentConnector implements PaymentConnector {
  readonly provider = STRIPE_PROVIDER;
  private readonly stripe: Stripe;

  constructor(private readonly options: StripeConnectorOptions) {
    this.stripe = stripeClient(options);
  }

  async refund(request: RefundRequest, call: CallOptions = {}): Promise<RefundOutcome> {
    assertEffectIdentity(request.idempotencyKey, request.metadata);
    if (call.signal?.aborted)
      return { kind: "failed", reason: "cancelled", retryable: true, message: "cancelled before the request was sent" };
    const metadata = {
      execution_id: request.metadata.executionId,
      task_id: request.metadata.taskId,
      idempotency_key: request.idempotencyKey,
      customer_id: request.customerId,
    };
    let response: Stripe.Response<StripeRefund> | "aborted";
    try {
      response = await stripeSpan("refunds.create", () =>
        withCallerSignal(call.signal, () =>
          this.stripe.refunds.create(
            { charge: request.chargeId, amount: request.amountCents, metadata },
            {
              idempotencyKey: request.idempotencyKey,
              ...(call.timeoutMs !== undefined ? { timeout: call.timeoutMs } : {}),
              ...tracedHeaders(this.options.headers),
            },
          ),
        ),
      );
    } catch (error) {
      return classifyStripeError(error);
    }
    if (response === "aborted")
      return {
        kind: "unknown",
        reason: "aborted",
        message: "cancelled by the caller after the request may have been sent",
      };
    const status = response.lastResponse.statusCode;
    const mismatches = [
      response.amount !== request.amountCents && "amount",
      response.currency !== request.currency && "currency",
      idOf(response.charge) !== request.chargeId && "charge",
      idOf(response.customer) !== null && idOf(response.customer) !== request.customerId && "customer",
      response.metadata?.execution_id !== metadata.execution_id && "metadata.execution_id",
      response.metadata?.idempotency_key !== request.idempotencyKey && "metadata.idempotency_key",
    ].filter(Boolean);
    if (mismatches.length)
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message: `Stripe's refund ${response.id} does not match the request: ${mismatches.join(", ")}`,
        httpStatus: status,
      };
    const unsettled = unsettledOf(response, status);
    if (unsettled) return unsettled;
    return {
      kind: "succeeded",
      refund: refundFromStripe(response),
      evidence: evidenceOf("refunds.create", request.idempotencyKey, response, response),
    };
  }

  /**
   * Stripe's refunds of the charge (every refund when the charge is not
   * known, up to a bound), searched for metadata.idempotency_key.
   */
  async lookupRefund(
    idempotencyKey: string,
    call: CallOptions = {},
    scope: RefundLookupScope = {},
  ): Promise<RefundLookup> {
    if (call.signal?.aborted) return { kind: "unknown", reason: "aborted", message: "cancelled before the lookup" };
    const matches: StripeRefund[] = [];
    let last: Stripe.Response<Stripe.ApiList<StripeRefund>> | undefined;
    const pages: unknown[] = [];
    try {
      let startingAfter: string | undefined;
      for (let page = 0; ; page++) {
        if (!scope.chargeId && page >= MAX_UNSCOPED_PAGES)
          return {
            kind: "unknown",
            reason: "unexpected_response",
            message: `more than ${MAX_UNSCOPED_PAGES * 100} refunds to search without the charge: cannot tell`,
          };
        const params: Stripe.RefundListParams = {
          limit: 100,
          ...(scope.chargeId ? { charge: scope.chargeId } : {}),
          ...(startingAfter ? { starting_after: startingAfter } : {}),
        };
        const listed = await stripeSpan("refunds.list", () =>
          withCallerSignal(call.signal, () =>
            this.stripe.refunds.list(params, {
              ...(call.timeoutMs !== undefined ? { timeout: call.timeoutMs } : {}),
              ...tracedHeaders(this.options.lookupHeaders),
            }),
          ),
        );
        if (listed === "aborted") return { kind: "unknown", reason: "aborted", message: "cancelled during the lookup" };
        last = listed;
        pages.push(listed.data);
        matches.push(...listed.data.filter((r) => r.metadata?.idempotency_key === idempotencyKey));
        const lastItem = listed.data.at(-1);
        if (!listed.has_more || !lastItem) break;
        startingAfter = lastItem.id;
      }
    } catch (error) {
      return lookupUnknownOf(error);
    }
    if (!last) return { kind: "unknown", reason: "unexpected_response", message: "the search returned no page" };
    const status = last.lastResponse.statusCode;
    const [first, ...rest] = matches;
    if (rest.length > 0)
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message: `${matches.length} refunds carry metadata.idempotency_key ${idempotencyKey}: ${matches.map((r) => r.id).join(", ")}`,
        httpStatus: status,
      };
    const evidence = evidenceOf("refunds.lookup", idempotencyKey, last, pages);
    if (first === undefined) {
      const sentAt = scope.sentAt;
      const inFlightMs = this.options.inFlightMs ?? this.options.timeoutMs ?? DEFAULT_STRIPE_TIMEOUT_MS;
      if (sentAt && Date.now() - sentAt.getTime() < inFlightMs)
        return {
          kind: "unknown",
          reason: "in_flight",
          message: `no refund under key ${idempotencyKey} yet, but its request of ${sentAt.toISOString()} may still be processing`,
          httpStatus: status,
        };
      return { kind: "not_found", evidence };
    }
    if (scope.chargeId && idOf(first.charge) !== scope.chargeId)
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message: `the search of charge ${scope.chargeId} returned ${first.id} of another charge`,
        httpStatus: status,
      };
    const unsettled = unsettledOf(first, status);
    if (unsettled) return unsettled;
    return { kind: "found", refund: refundFromStripe(first), evidence };
  }
}

/** The connector of VERITY_PAYMENTS_PROVIDER=stripe: a missing key is a configuration error, found at the first use. */
export function stripePaymentConnectorFromSettings(settings: {
  STRIPE_API_BASE?: string;
  STRIPE_API_KEY?: string;
}): StripePaymentConnector {
  if (!settings.STRIPE_API_KEY)
    throw new Error(
      "VERITY_PAYMENTS_PROVIDER=stripe needs STRIPE_API_KEY (and STRIPE_API_BASE unless it is api.stripe.com).",
    );
  return new StripePaymentConnector({ apiKey: settings.STRIPE_API_KEY, apiBase: settings.STRIPE_API_BASE });
}

/** One call through the stripe package as a client span (lib/config/tracing.ts). */
function stripeSpan<T>(operation: string, call: () => Promise<T>): Promise<T> {
  return inSpan(`stripe ${operation}`, { "rpc.system": "stripe", "rpc.method": operation }, call, {
    kind: SpanKind.CLIENT,
  });
}

/** The request's extra headers with the active trace's `traceparent`: the package takes headers per request. */
function tracedHeaders(extra: Record<string, string> | undefined): { headers?: Record<string, string> } {
  const headers = withTraceHeaders(extra ?? {});
  return Object.keys(headers).length > 0 ? { headers } : {};
}
