import type { IncomingMessage } from "node:http";
import type { SandboxRefund } from "@/lib/connectors/sandbox/contract";

/**
 * The subset of Stripe's wire protocol the sandbox's /stripe surface speaks,
 * which is the subset lib/connectors/stripe uses: form-encoded requests
 * (`metadata[k]=v`), Stripe's refund, charge, list and event objects, and
 * its error body `{error: {type, code?, message, param?}}`.
 */

/** Test-only: the Stripe error this request gets before anything is stored (a decline, a rate limit). */
export const STRIPE_ERROR_HEADER = "X-Sandbox-Stripe-Error";
/** The API version the sandbox's objects and events follow (the stripe package's own is newer; the fields used are the same). */
export const SANDBOX_STRIPE_API_VERSION = "2025-01-27.acacia";

export type StripeErrorType =
  "invalid_request_error" | "idempotency_error" | "card_error" | "api_error" | "rate_limit_error";

export class StripeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: StripeErrorType,
    readonly code: string | undefined,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = "StripeHttpError";
  }

  toBody(): { error: Record<string, string> } {
    return {
      error: {
        type: this.type,
        ...(this.code ? { code: this.code } : {}),
        message: this.message,
        ...(this.param ? { param: this.param } : {}),
      },
    };
  }
}

export function invalidRequest(code: string, message: string, param?: string): StripeHttpError {
  return new StripeHttpError(400, "invalid_request_error", code, message, param);
}

/** The errors a test can ask for with X-Sandbox-Stripe-Error, as Stripe states them: nothing was done. */
export const injectableErrors = {
  card_declined: () => new StripeHttpError(402, "card_error", "card_declined", "Your card was declined."),
  rate_limit: () =>
    new StripeHttpError(
      429,
      "rate_limit_error",
      "rate_limit",
      "Too many requests hit the API too quickly. We recommend an exponential backoff of your requests.",
    ),
} as const;
export type InjectableError = keyof typeof injectableErrors;

export function isInjectableError(name: string): name is InjectableError {
  return Object.hasOwn(injectableErrors, name);
}

export interface StripeCharge {
  id: string;
  object: "charge";
  amount: number;
  currency: string;
  customer: string | null;
  created: number;
}

/** Stripe's refund object for a refund in the sandbox's store. */
export function stripeRefundOf(r: SandboxRefund) {
  return {
    id: r.id,
    object: "refund" as const,
    amount: r.amount_cents,
    balance_transaction: null,
    charge: r.charge_id,
    created: Math.floor(Date.parse(r.created_at) / 1000),
    currency: r.currency,
    customer: r.customer_id === "" ? null : r.customer_id,
    metadata: r.metadata,
    payment_intent: null,
    reason: null,
    receipt_number: null,
    source_transfer_reversal: null,
    status: r.status,
    transfer_reversal: null,
  };
}

/** Reads `application/x-www-form-urlencoded`, the only body Stripe's v1 API takes. */
export async function readFormBody(req: IncomingMessage, maxBytes: number): Promise<URLSearchParams> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded")
    throw invalidRequest("parameter_invalid", "Send the parameters form-encoded (application/x-www-form-urlencoded).");
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.byteLength;
    if (total > maxBytes) throw invalidRequest("parameter_invalid", `The body exceeds ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export interface RefundCreateParams {
  charge: string;
  amount: number | undefined;
  reason: string | undefined;
  metadata: Record<string, string>;
}

const reasons = new Set(["duplicate", "fraudulent", "requested_by_customer"]);

/** Stripe's rules for the parameters the sandbox takes: an unknown or repeated one is refused, naming it. */
export function parseRefundCreate(form: URLSearchParams): RefundCreateParams {
  const metadata: Record<string, string> = {};
  const seen = new Set<string>();
  let charge: string | undefined;
  let amount: number | undefined;
  let reason: string | undefined;
  for (const [name, value] of form) {
    if (seen.has(name)) throw invalidRequest("parameter_invalid", `${name} is given more than once`, name);
    seen.add(name);
    const meta = /^metadata\[([^\]]*)\]$/.exec(name);
    if (meta) {
      const key = meta[1] ?? "";
      if (!/^[A-Za-z0-9_.-]{1,40}$/.test(key))
        throw invalidRequest("parameter_invalid", "metadata keys are 1–40 of A-Z a-z 0-9 _ . -", name);
      if (value.length > 500)
        throw invalidRequest("parameter_invalid", "metadata values are at most 500 characters", name);
      metadata[key] = value;
      continue;
    }
    switch (name) {
      case "charge":
        charge = value;
        break;
      case "amount":
        if (!/^[1-9]\d{0,7}$/.test(value))
          throw invalidRequest("parameter_invalid_integer", "Invalid positive integer", "amount");
        amount = Number(value);
        break;
      case "reason":
        if (!reasons.has(value)) throw invalidRequest("parameter_invalid", `Invalid reason: ${value}`, "reason");
        reason = value;
        break;
      default:
        throw invalidRequest("parameter_unknown", `Received unknown parameter: ${name}`, name);
    }
  }
  if (Object.keys(metadata).length > 50)
    throw invalidRequest("parameter_invalid", "at most 50 metadata keys", "metadata");
  if (!charge) throw invalidRequest("parameter_missing", "Missing required param: charge.", "charge");
  return { charge, amount, reason, metadata };
}

export interface StripeEvent {
  id: string;
  object: "event";
  api_version: string;
  created: number;
  data: { object: unknown };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: "charge.refunded" | "refund.updated";
}
