import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { signWebhook } from "@/lib/connectors/sandbox/webhook-signature";
import { STRIPE_SIGNATURE_HEADER } from "@/lib/connectors/stripe/webhooks";
import { HEADER, type SandboxRefund } from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { fromZodIssues, headerOf, readJsonBody, sendJson, SandboxHttpError } from "@/programs/sandbox/http";
import { idempotencyKeyOf, runIdempotentMutation } from "@/programs/sandbox/mutation";
import {
  injectableErrors,
  invalidRequest,
  isInjectableError,
  parseRefundCreate,
  readFormBody,
  SANDBOX_STRIPE_API_VERSION,
  STRIPE_ERROR_HEADER,
  stripeRefundOf,
  StripeHttpError,
  type StripeEvent,
} from "@/programs/sandbox/stripe/wire";

/**
 * Stripe's refunds API on the sandbox's store: a refund made here is in the
 * same journal, under the same idempotency keys, seen by the sandbox's own
 * lookups and stats, and gets the same faults (X-Sandbox-Fault and the global
 * ones: latency, 500 after the commit, a hanging or dropped response). What
 * differs is Stripe's wire: form-encoded parameters, a bearer secret key,
 * Stripe's objects, a reused key answered 400 idempotency_error, events
 * signed with Stripe-Signature.
 */

type Handler = (ctx: SandboxContext, rc: RequestContext, ...params: string[]) => Promise<void>;

/** Every handler's errors in Stripe's shape; the sandbox's own errors (a missing key, a 413) have that shape already. */
function stripeRoute(handler: Handler): Handler {
  return async (ctx, rc, ...params) => {
    try {
      requireSecretKey(rc);
      await handler(ctx, rc, ...params);
    } catch (error) {
      if (error instanceof StripeHttpError) return sendJson(rc.res, error.status, error.toBody());
      if (error instanceof SandboxHttpError) return sendJson(rc.res, error.status, error.toBody());
      throw error;
    }
  };
}

/** Stripe refuses a request without a secret key; the sandbox takes any test-mode one. */
function requireSecretKey(rc: RequestContext): void {
  const auth = headerOf(rc.req, "authorization") ?? "";
  if (!/^Bearer (sk|rk)_test_\S+$/.test(auth))
    throw new StripeHttpError(
      401,
      "invalid_request_error",
      undefined,
      "Invalid API Key provided: the sandbox takes a test-mode secret key (Bearer sk_test_…).",
    );
}

function remainingOf(ctx: SandboxContext, chargeId: string, amount: number): number {
  const refunded = ctx.store
    .listRefunds()
    .filter((r) => r.charge_id === chargeId)
    .reduce((sum, r) => sum + r.amount_cents, 0);
  return amount - refunded;
}

async function createRefund(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  const injected = headerOf(rc.req, STRIPE_ERROR_HEADER)?.trim();
  if (injected) {
    if (!isInjectableError(injected))
      throw invalidRequest(
        "parameter_invalid",
        `unknown ${STRIPE_ERROR_HEADER} "${injected}"; known: ${Object.keys(injectableErrors).join(", ")}`,
        STRIPE_ERROR_HEADER,
      );
    ctx.counters.faults[injected] = (ctx.counters.faults[injected] ?? 0) + 1;
    throw injectableErrors[injected]();
  }
  const params = parseRefundCreate(await readFormBody(rc.req, ctx.maxBodyBytes));
  const charge = ctx.stripe.charges.get(params.charge);
  if (!charge) throw invalidRequest("resource_missing", `No such charge: '${params.charge}'`, "charge");
  const requestId = rc.res.getHeader(HEADER.requestId);
  await runIdempotentMutation(ctx, rc, {
    namespace: "refunds",
    key,
    fingerprint: digestOf({ method: "POST", path: "/stripe/v1/refunds", params }),
    build: (): SandboxRefund => {
      // Inside the claim: two refunds of one charge under two keys cannot both pass this check.
      const remaining = remainingOf(ctx, charge.id, charge.amount);
      const amount = params.amount ?? remaining;
      if (remaining <= 0)
        throw invalidRequest("charge_already_refunded", `Charge ${charge.id} has already been refunded.`, "charge");
      if (amount > remaining)
        throw invalidRequest(
          "amount_too_large",
          `Refund amount (${amount}) is greater than the unrefunded amount on charge (${remaining}).`,
          "amount",
        );
      return {
        id: newId("re"),
        status: "succeeded",
        amount_cents: amount,
        currency: charge.currency,
        charge_id: charge.id,
        customer_id: charge.customer ?? "",
        metadata: params.metadata,
        idempotency_key: key,
        created_at: new Date().toISOString(),
      };
    },
    present: stripeRefundOf,
    conflict: (kind) =>
      kind === "mismatch"
        ? {
            status: 400,
            body: new StripeHttpError(
              400,
              "idempotency_error",
              "idempotency_key_reused",
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            ).toBody(),
          }
        : {
            status: 409,
            body: new StripeHttpError(
              409,
              "idempotency_error",
              "idempotency_key_in_use",
              `There is currently another in-progress request using this Idempotency-Key (${key}); retry it later.`,
            ).toBody(),
          },
    afterCommit: (refund) =>
      sendEvents(ctx, refund, { requestId: typeof requestId === "string" ? requestId : null, key }, rc),
  });
}

/** charge.refunded (the charge with its refunds) and refund.updated (the refund), as Stripe sends them for a card refund. */
function sendEvents(
  ctx: SandboxContext,
  refund: SandboxRefund,
  request: { requestId: string | null; key: string },
  rc: RequestContext,
): void {
  const url = ctx.stripe.webhookUrl;
  if (!url) return;
  const secret = ctx.stripe.webhookSecret;
  const charge = ctx.stripe.charges.get(refund.charge_id);
  const refundsOfCharge = ctx.store
    .listRefunds()
    .filter((r) => r.charge_id === refund.charge_id)
    .map(stripeRefundOf)
    .reverse();
  const event = (type: StripeEvent["type"], object: unknown): StripeEvent => ({
    id: newId("evt"),
    object: "event",
    api_version: SANDBOX_STRIPE_API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: request.requestId, idempotency_key: request.key },
    type,
  });
  const events = [
    event("charge.refunded", {
      ...charge,
      amount_refunded: refundsOfCharge.reduce((sum, r) => sum + r.amount, 0),
      refunded: charge ? refundsOfCharge.reduce((sum, r) => sum + r.amount, 0) >= charge.amount : false,
      refunds: {
        object: "list",
        data: refundsOfCharge,
        has_more: false,
        url: `/v1/charges/${refund.charge_id}/refunds`,
      },
    }),
    event("refund.updated", stripeRefundOf(refund)),
  ];
  const sign = (body: string, t: number): Record<string, string> =>
    secret ? { [STRIPE_SIGNATURE_HEADER]: signWebhook(secret, body, t) } : {};
  for (const e of events) ctx.webhooks.sendSigned(url, JSON.stringify(e), sign, rc.plan.duplicateWebhook ? 2 : 1);
}

const listQuerySchema = z.strictObject({
  charge: z.string().min(1).max(255).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(10),
  starting_after: z.string().min(1).optional(),
});

/** Stripe's list: newest first, `limit` at a time, `starting_after` the last id of the page before. */
async function listRefunds(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const raw: Record<string, string> = {};
  for (const [name, value] of rc.url.searchParams) {
    if (Object.hasOwn(raw, name)) throw invalidRequest("parameter_invalid", `${name} is given more than once`, name);
    raw[name] = value;
  }
  const parsed = listQuerySchema.safeParse(raw);
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  const q = parsed.data;
  let refunds = [...ctx.store.listRefunds()].reverse();
  if (q.charge !== undefined) refunds = refunds.filter((r) => r.charge_id === q.charge);
  if (q.starting_after !== undefined) {
    const at = refunds.findIndex((r) => r.id === q.starting_after);
    if (at < 0) throw invalidRequest("resource_missing", `No such refund: '${q.starting_after}'`, "starting_after");
    refunds = refunds.slice(at + 1);
  }
  sendJson(rc.res, 200, {
    object: "list",
    data: refunds.slice(0, q.limit).map(stripeRefundOf),
    has_more: refunds.length > q.limit,
    url: "/v1/refunds",
  });
}

async function getRefund(ctx: SandboxContext, rc: RequestContext, id: string): Promise<void> {
  const refund = ctx.store.refund(id);
  if (!refund) throw invalidRequest("resource_missing", `No such refund: '${id}'`, "id");
  sendJson(rc.res, 200, stripeRefundOf(refund));
}

async function getCharge(ctx: SandboxContext, rc: RequestContext, id: string): Promise<void> {
  const charge = ctx.stripe.charges.get(id);
  if (!charge) throw invalidRequest("resource_missing", `No such charge: '${id}'`, "id");
  sendJson(rc.res, 200, { ...charge, amount_refunded: charge.amount - remainingOf(ctx, id, charge.amount) });
}

const chargeFixtureSchema = z.strictObject({
  id: z
    .string()
    .regex(/^ch_[A-Za-z0-9_-]{1,200}$/)
    .optional(),
  amount: z.number().int().positive().max(99_999_999),
  currency: z.string().regex(/^[a-z]{3}$/),
  customer: z.string().min(1).max(255).nullable().optional(),
});

/** The harness's charges (programs/sandbox/stripe/charges.ts); an admin route, never faulted. */
export async function registerCharge(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const parsed = chargeFixtureSchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  sendJson(rc.res, 200, ctx.stripe.charges.register(parsed.data));
}

export const stripeCreateRefund = stripeRoute(createRefund);
export const stripeListRefunds = stripeRoute(listRefunds);
export const stripeGetRefund = stripeRoute(getRefund);
export const stripeGetCharge = stripeRoute(getCharge);
