import { describe, expect, it } from "vitest";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { webhookEventSchema } from "@/lib/connectors/sandbox/contract";
import { signWebhook, verifyWebhookSignature } from "@/lib/connectors/sandbox/webhook-signature";
import { get, post, receiver, refundBody, sandbox, waitFor } from "./helpers";

const fast = { attempts: 4, baseDelayMs: 10, timeoutMs: 1_000 };

describe("webhooks", () => {
  it("posts refund.succeeded with a unique event id after the commit, not on a replay", async () => {
    const hook = await receiver();
    const s = await sandbox({ webhookUrl: hook.url, webhookDelivery: fast });
    const a = await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "a" });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "a" });
    await post(`${s.url}/v1/refunds`, refundBody({ amount_cents: 5 }), { "Idempotency-Key": "b" });
    await s.webhooksIdle();
    const events = hook.received.map((r) => webhookEventSchema.parse(JSON.parse(r.body)));
    expect(events.map((e) => e.type)).toEqual(["refund.succeeded", "refund.succeeded"]);
    expect(events[0]?.data).toEqual(a.json);
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
  });

  it("duplicate_webhook delivers the same event twice, same id and bytes", async () => {
    const hook = await receiver();
    const s = await sandbox({ webhookDelivery: fast });
    await post(`${s.url}/v1/refunds`, refundBody(), {
      "Idempotency-Key": "a",
      "X-Sandbox-Fault": "duplicate_webhook",
      "X-Sandbox-Webhook-Url": hook.url,
    });
    await s.webhooksIdle();
    expect(hook.received).toHaveLength(2);
    expect(hook.received[0]?.body).toBe(hook.received[1]?.body);
    expect(webhookEventSchema.parse(JSON.parse(hook.received[0]?.body ?? "")).id).toMatch(/^evt_/);
    expect((await get(`${s.url}/__sandbox/stats`)).json.webhooks).toEqual({ delivered: 2, failed: 0, attempts: 2 });
  });

  it("sends the event even when the response is lost, so a receiver can learn what the client could not", async () => {
    const hook = await receiver();
    const s = await sandbox({ webhookUrl: hook.url, webhookDelivery: fast });
    const connector = new SandboxPaymentConnector({ baseUrl: s.url, faults: ["drop_response"] });
    const outcome = await connector.refund({
      idempotencyKey: "k",
      amountCents: 100,
      currency: "usd",
      chargeId: "ch_1",
      customerId: "cus_1",
      metadata: { executionId: "exec_1", taskId: "task_1" },
    });
    expect(outcome.kind).toBe("unknown");
    await s.webhooksIdle();
    expect(webhookEventSchema.parse(JSON.parse(hook.received[0]?.body ?? "")).data.metadata.execution_id).toBe(
      "exec_1",
    );
  });

  it("retries with backoff until the receiver takes it, and gives up after the last attempt", async () => {
    const flaky = await receiver((_r, res, n) => {
      res.statusCode = n < 3 ? 500 : 200;
      res.end();
    });
    const down = await receiver((_r, res) => {
      res.statusCode = 503;
      res.end();
    });
    const s = await sandbox({ webhookDelivery: fast });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "a", "X-Sandbox-Webhook-Url": flaky.url });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "b", "X-Sandbox-Webhook-Url": down.url });
    await s.webhooksIdle();
    expect(flaky.received).toHaveLength(3);
    expect(new Set(flaky.received.map((r) => r.body)).size).toBe(1);
    expect(down.received).toHaveLength(4);
    expect((await get(`${s.url}/__sandbox/stats`)).json.webhooks).toEqual({ delivered: 1, failed: 1, attempts: 7 });
  });

  it("never holds up the API response", async () => {
    const stuck = await receiver(() => undefined); // takes the delivery and never answers
    const s = await sandbox({ webhookUrl: stuck.url, webhookDelivery: { ...fast, timeoutMs: 30_000 } });
    const res = await fetch(`${s.url}/v1/refunds`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": "a" },
      body: JSON.stringify(refundBody()),
      signal: AbortSignal.timeout(5_000),
    });
    expect(res.status).toBe(200);
    await waitFor(async () => stuck.received.length === 1);
  });

  it("signs deliveries when given a secret; the signature binds body and time", async () => {
    const hook = await receiver();
    const secret = "whsec_test_0123456789";
    const s = await sandbox({ webhookUrl: hook.url, webhookSecret: secret, webhookDelivery: fast });
    await post(`${s.url}/v1/refunds`, refundBody(), { "Idempotency-Key": "a" });
    await s.webhooksIdle();
    const [delivery] = hook.received;
    if (!delivery) throw new Error("no delivery");
    const header = String(delivery.headers["sandbox-signature"]);
    expect(verifyWebhookSignature({ secret, header, body: delivery.body })).toBe(true);
    expect(verifyWebhookSignature({ secret: "whsec_other_0123456789", header, body: delivery.body })).toBe(false);
    expect(verifyWebhookSignature({ secret, header, body: delivery.body.replace("1250", "9999") })).toBe(false);
    expect(
      verifyWebhookSignature({ secret, header: signWebhook(secret, delivery.body, 1_000), body: delivery.body }),
    ).toBe(false);
    expect(verifyWebhookSignature({ secret, header: null, body: delivery.body })).toBe(false);
  });

  it("refuses a webhook URL that is not http(s)", async () => {
    const s = await sandbox();
    const res = await post(`${s.url}/v1/refunds`, refundBody(), {
      "Idempotency-Key": "a",
      "X-Sandbox-Webhook-Url": "file:///etc/passwd",
    });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe("X-Sandbox-Webhook-Url");
  });
});
