import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { createRefundBodySchema, HEADER, type SandboxRefund } from "@/lib/connectors/sandbox/contract";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import {
  fromZodIssues,
  headerOf,
  invalidParameter,
  queryOf,
  readJsonBody,
  sendJson,
  SandboxHttpError,
} from "@/programs/sandbox/http";
import { idempotencyKeyOf, runIdempotentMutation } from "@/programs/sandbox/mutation";

/** The payment provider: Stripe-like refunds. */

export async function createRefund(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const key = idempotencyKeyOf(rc.req);
  const webhookUrl = webhookUrlOf(rc) ?? ctx.webhookUrl;
  const parsed = createRefundBodySchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  const params = { ...parsed.data, metadata: parsed.data.metadata ?? {} };
  await runIdempotentMutation(ctx, rc, {
    namespace: "refunds",
    key,
    fingerprint: digestOf({ method: "POST", path: "/v1/refunds", params }),
    build: (): SandboxRefund => ({
      id: newId("re"),
      status: "succeeded",
      amount_cents: params.amount_cents,
      currency: params.currency,
      charge_id: params.charge_id,
      customer_id: params.customer_id,
      metadata: params.metadata,
      idempotency_key: key,
      created_at: new Date().toISOString(),
    }),
    afterCommit: (refund) => {
      if (!webhookUrl) return;
      const event = {
        id: newId("evt"),
        type: "refund.succeeded" as const,
        created_at: new Date().toISOString(),
        data: refund,
      };
      ctx.webhooks.send(webhookUrl, event, rc.plan.duplicateWebhook ? 2 : 1);
    },
  });
}

/** `?idempotency_key=K` is the reconciler's lookup; without it, every refund (for consistency checks). */
export async function listRefunds(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const query = queryOf(rc.url, ["idempotency_key"]);
  const key = query.idempotency_key;
  if (key === undefined) return sendJson(rc.res, 200, { data: ctx.store.listRefunds() });
  const refund = ctx.store.refundByIdempotencyKey(key);
  sendJson(rc.res, 200, {
    data: refund ? [refund] : [],
    in_flight: !refund && ctx.store.keys.isInFlight("refunds", key),
  });
}

export async function getRefund(ctx: SandboxContext, rc: RequestContext, id: string): Promise<void> {
  queryOf(rc.url, []);
  const refund = ctx.store.refund(id);
  if (!refund)
    throw new SandboxHttpError(404, "invalid_request_error", "resource_missing", `No such refund: ${id}`, "id");
  sendJson(rc.res, 200, refund);
}

function webhookUrlOf(rc: RequestContext): string | undefined {
  const value = headerOf(rc.req, HEADER.webhookUrl)?.trim();
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidParameter(`${HEADER.webhookUrl} is not a URL`, HEADER.webhookUrl);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalidParameter(`${HEADER.webhookUrl} must be http(s)`, HEADER.webhookUrl);
  return url.href;
}
