import { beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { signWebhook } from "@/lib/connectors/sandbox/webhook-signature";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { performEffect } from "@/lib/connectors/effects";
import { StripePaymentConnector } from "@/lib/connectors/stripe/payment";
import * as stripeWebhookRoute from "@/app/api/v1/events/stripe/route";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { executionRow, refund, refundExecution } from "@/tests/helpers/effects";
import { post, receiver, sandbox, type Received } from "@/tests/sandbox/helpers";

/**
 * POST /api/v1/events/stripe, its route handler on a real database, fed the
 * events the sandbox's Stripe surface really sent (signed there with
 * Stripe's scheme, verified here by the `stripe` package): a refund event
 * settles the execution named in its metadata, a redelivery changes
 * nothing, and a missing, wrong or stale signature is a 400 with nothing
 * stored.
 */
const db = useTestDatabase();
const secret = "whsec_a-stripe-webhook-secret-for-this-test";

beforeAll(() => {
  // Read once by getEnv, at first use (after this).
  process.env.STRIPE_WEBHOOK_SECRET = secret;
  (globalThis as unknown as { verityDb?: DatabaseHandle }).verityDb = {
    db,
    forTenant: () => db,
    platformDb: db,
    adapterFactory: undefined as never,
    listenForChanges: undefined as never,
    close: async () => {},
  };
});

async function postEvent(body: string, signature: string | undefined) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (signature !== undefined) headers["Stripe-Signature"] = signature;
  const response = await stripeWebhookRoute.POST(
    new Request("http://localhost/api/v1/events/stripe", { method: "POST", headers, body }),
  );
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    replayed: response.headers.get("Idempotent-Replayed"),
    body: (await response.json()) as Record<string, any>,
  };
}

/** A refund made through the Stripe connector for a SENT execution; the sandbox's two events for it, as delivered. */
async function refundWithEvents() {
  const hooks = await receiver();
  const s = await sandbox({ stripeWebhookUrl: hooks.url, stripeWebhookSecret: secret });
  await post(`${s.url}/__sandbox/stripe/charges`, {
    id: refund.charge_id,
    amount: 10_000,
    currency: "usd",
    customer: refund.customer_id,
  });
  const execution = await refundExecution(db);
  const outcome = await performEffect(execution, {
    payments: new StripePaymentConnector({ apiKey: "sk_test_verity", apiBase: `${s.url}/stripe` }),
    crm: new SandboxCrmConnector({ baseUrl: s.url }),
  });
  expect(outcome.kind).toBe("succeeded");
  await s.webhooksIdle();
  const byType = new Map(hooks.received.map((d: Received) => [JSON.parse(d.body).type as string, d]));
  const delivery = (type: string) => {
    const d = byType.get(type);
    if (!d) throw new Error(`no ${type} event was delivered`);
    return { body: d.body, signature: String(d.headers["stripe-signature"]) };
  };
  return { execution, chargeRefunded: delivery("charge.refunded"), refundUpdated: delivery("refund.updated") };
}

describe("Stripe's signed refund events", () => {
  it("settle the execution in the refund's metadata once; a replayed event changes nothing and answers 200", async () => {
    const { execution, chargeRefunded, refundUpdated } = await refundWithEvents();
    const eventId = JSON.parse(chargeRefunded.body).id as string;

    const first = await postEvent(chargeRefunded.body, chargeRefunded.signature);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      event_id: eventId,
      duplicate: false,
      result: {
        type: "charge.refunded",
        refunds: [{ result: { applied: true, outcome: "settled", execution_id: execution.id } }],
      },
    });
    const settled = await executionRow(db, execution.id);
    expect(settled.status).toBe("SUCCEEDED");
    const auditAfterFirst = await db.auditEntry.count();

    const replay = await postEvent(chargeRefunded.body, chargeRefunded.signature);
    expect(replay).toMatchObject({
      status: 200,
      replayed: "true",
      body: { duplicate: true, result: first.body.result },
    });
    expect(await db.inboxEvent.count({ where: { eventId: `stripe:${eventId}` } })).toBe(1);
    expect(await db.auditEntry.count()).toBe(auditAfterFirst);
    expect((await executionRow(db, execution.id)).version).toBe(settled.version);

    // The refund's own event is another event about the same effect: received, applies nothing new.
    const updated = await postEvent(refundUpdated.body, refundUpdated.signature);
    expect(updated.body).toMatchObject({
      duplicate: false,
      result: { type: "refund.updated", refunds: [{ result: { applied: false, outcome: "already_succeeded" } }] },
    });
  });

  it.each([
    ["no signature", () => undefined],
    [
      "another secret's signature",
      (body: string) => signWebhook("whsec_someone-else", body, Math.floor(Date.now() / 1000)),
    ],
    ["a stale timestamp", (body: string) => signWebhook(secret, body, Math.floor(Date.now() / 1000) - 600)],
    ["a malformed header", () => "t=now,v1=zz"],
  ])("refuse %s with a 400 problem naming Stripe-Signature; nothing is received", async (_what, sign) => {
    const { execution, refundUpdated } = await refundWithEvents();
    const eventId = JSON.parse(refundUpdated.body).id as string;
    const res = await postEvent(refundUpdated.body, sign(refundUpdated.body));
    expect(res.status).toBe(400);
    expect(res.type).toContain("application/problem+json");
    expect(res.body.errors).toEqual([{ field: "Stripe-Signature", message: expect.any(String) }]);
    expect(await db.inboxEvent.count({ where: { eventId: `stripe:${eventId}` } })).toBe(0);
    expect((await executionRow(db, execution.id)).status).toBe("SENT");
  });

  it("refuses a body changed after signing", async () => {
    const { refundUpdated } = await refundWithEvents();
    const changed = refundUpdated.body.replace('"amount":2500', '"amount":250000');
    expect(changed).not.toBe(refundUpdated.body);
    expect((await postEvent(changed, refundUpdated.signature)).status).toBe(400);
  });

  it("a signed event of a type Verity does not read is received once and applies nothing (a 2xx, so Stripe stops)", async () => {
    const body = JSON.stringify({ id: "evt_other", object: "event", type: "customer.created", data: { object: {} } });
    const res = await postEvent(body, signWebhook(secret, body, Math.floor(Date.now() / 1000)));
    expect(res).toMatchObject({
      status: 200,
      body: { duplicate: false, result: { type: "customer.created", refunds: [] } },
    });
    expect(await db.inboxEvent.count({ where: { eventId: "stripe:evt_other" } })).toBe(1);
  });

  it("a signed refund event that does not parse is a 400 naming what is wrong, not stored", async () => {
    const body = JSON.stringify({
      id: "evt_bad",
      object: "event",
      type: "refund.updated",
      data: { object: { id: "re_1" } },
    });
    const res = await postEvent(body, signWebhook(secret, body, Math.floor(Date.now() / 1000)));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("data.object.amount");
    expect(await db.inboxEvent.count({ where: { eventId: "stripe:evt_bad" } })).toBe(0);
  });
});
