import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { StripePaymentConnector, type StripeConnectorOptions } from "@/lib/connectors/stripe/payment";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { RefundRequest } from "@/lib/connectors/types";
import { get, listRefunds, post, sandbox, waitFor } from "./helpers";

/**
 * The Stripe connector (the official `stripe` package) against the
 * sandbox's Stripe surface over real HTTP: each answer Stripe can give and
 * how the connector classifies it by the rules of lib/connectors/types.ts,
 * and the lookup by metadata that stands in for Stripe's missing lookup by
 * idempotency key.
 */

const apiKey = "sk_test_verity";

const request = (key: string, over: Partial<RefundRequest> = {}): RefundRequest => ({
  idempotencyKey: key,
  amountCents: 4200,
  currency: "usd",
  chargeId: "ch_42",
  customerId: "cus_42",
  metadata: { executionId: `exec_${key}`, taskId: "task_42" },
  ...over,
});

async function setup(options: Partial<StripeConnectorOptions> = {}) {
  const s = await sandbox();
  const charge = await post(`${s.url}/__sandbox/stripe/charges`, {
    id: "ch_42",
    amount: 10_000,
    currency: "usd",
    customer: "cus_42",
  });
  expect(charge.status).toBe(200);
  const connector = (more: Partial<StripeConnectorOptions> = {}) =>
    new StripePaymentConnector({ apiKey, apiBase: `${s.url}/stripe`, timeoutMs: 2_000, ...options, ...more });
  return { s, stripe: connector(), connector };
}

const fault = (value: string) => ({ headers: { "X-Sandbox-Fault": value } });
const stripeError = (value: string) => ({ headers: { "X-Sandbox-Stripe-Error": value } });
const longAgo = new Date(Date.now() - 3_600_000);

describe("refunds through the stripe package", () => {
  it("creates the refund with the key as Idempotency-Key and in metadata, into the sandbox's one store", async () => {
    const { s, stripe } = await setup();
    const outcome = await stripe.refund(request("k1"));
    expect(outcome).toMatchObject({
      kind: "succeeded",
      refund: {
        amountCents: 4200,
        currency: "usd",
        chargeId: "ch_42",
        customerId: "cus_42",
        idempotencyKey: "k1",
        metadata: { execution_id: "exec_k1", task_id: "task_42", idempotency_key: "k1" },
      },
      evidence: { provider: "stripe", operation: "refunds.create", httpStatus: 200, replayed: false },
    });
    if (outcome.kind !== "succeeded") throw new Error("unreachable");
    expect(outcome.refund.id).toMatch(/^re_/);
    expect(outcome.evidence.providerRequestId).toMatch(/^req_/);
    // The sandbox's own lookup by key and its list see the same refund.
    const sandboxLookup = await new SandboxPaymentConnector({ baseUrl: s.url }).lookupRefund("k1");
    expect(sandboxLookup).toMatchObject({ kind: "found", refund: { id: outcome.refund.id } });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("a replay under the same key answers the first refund (Idempotent-Replayed), never a second one", async () => {
    const { s, stripe } = await setup();
    const first = await stripe.refund(request("k1"));
    const again = await stripe.refund(request("k1"));
    expect(again).toMatchObject({ kind: "succeeded", evidence: { replayed: true } });
    if (first.kind !== "succeeded" || again.kind !== "succeeded") throw new Error("unreachable");
    expect(again.refund.id).toBe(first.refund.id);
    expect(await listRefunds(s.url)).toHaveLength(1);
    expect((await get(`${s.url}/__sandbox/stats`)).json).toMatchObject({ replays: 1 });
  });

  it("the key reused with other parameters is Stripe's 400 idempotency_error: unknown, idempotency_key_reused", async () => {
    const { s, stripe } = await setup();
    await stripe.refund(request("k1"));
    expect(await stripe.refund(request("k1", { amountCents: 999 }))).toMatchObject({
      kind: "unknown",
      reason: "idempotency_key_reused",
      httpStatus: 400,
    });
    expect((await listRefunds(s.url)).map((r) => r.amount_cents)).toEqual([4200]);
  });

  it("a decline (402 card_declined) is failed, not retryable; nothing is stored", async () => {
    const { s, connector } = await setup();
    expect(await connector(stripeError("card_declined")).refund(request("k1"))).toMatchObject({
      kind: "failed",
      reason: "rejected",
      retryable: false,
      httpStatus: 402,
    });
    expect(await listRefunds(s.url)).toHaveLength(0);
  });

  it("a rate limit (429) is failed and retryable; the retry under the key refunds once", async () => {
    const { s, stripe, connector } = await setup();
    expect(await connector(stripeError("rate_limit")).refund(request("k1"))).toMatchObject({
      kind: "failed",
      reason: "rate_limited",
      retryable: true,
      httpStatus: 429,
    });
    expect(await stripe.refund(request("k1"))).toMatchObject({ kind: "succeeded", evidence: { replayed: false } });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("an invalid request (no such charge, more than the charge) is failed, not retryable", async () => {
    const { s, stripe } = await setup();
    expect(await stripe.refund(request("k1", { chargeId: "ch_missing" }))).toMatchObject({
      kind: "failed",
      reason: "invalid_request",
      retryable: false,
      httpStatus: 400,
    });
    expect(await stripe.refund(request("k2", { amountCents: 10_001 }))).toMatchObject({
      kind: "failed",
      reason: "invalid_request",
    });
    expect(await listRefunds(s.url)).toHaveLength(0);
  });

  it("a refund in another currency than asked is not a success: unknown, and the lookup shows what was made", async () => {
    const { stripe } = await setup();
    expect(await stripe.refund(request("k1", { currency: "eur" }))).toMatchObject({
      kind: "unknown",
      reason: "unexpected_response",
      message: expect.stringContaining("currency"),
    });
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt: longAgo })).toMatchObject({
      kind: "found",
      refund: { currency: "usd" },
    });
  });

  it("the customer is Stripe's: another customer's charge is not a success; a charge without one takes the request's", async () => {
    const { s, stripe } = await setup();
    await post(`${s.url}/__sandbox/stripe/charges`, {
      id: "ch_other",
      amount: 10_000,
      currency: "usd",
      customer: "cus_other",
    });
    await post(`${s.url}/__sandbox/stripe/charges`, {
      id: "ch_guest",
      amount: 10_000,
      currency: "usd",
      customer: null,
    });
    expect(await stripe.refund(request("k1", { chargeId: "ch_other" }))).toMatchObject({
      kind: "unknown",
      reason: "unexpected_response",
      message: expect.stringContaining("customer"),
    });
    expect(await stripe.refund(request("k2", { chargeId: "ch_guest" }))).toMatchObject({
      kind: "succeeded",
      refund: { customerId: "cus_42", metadata: { customer_id: "cus_42" } },
    });
  });

  it("a wrong API key is refused (401): failed, nothing stored", async () => {
    const s = await sandbox();
    const outcome = await new StripePaymentConnector({ apiKey: "sk_live_x", apiBase: `${s.url}/stripe` }).refund(
      request("k1"),
    );
    expect(outcome).toMatchObject({ kind: "failed", reason: "rejected", httpStatus: 401 });
  });
});

describe("what Stripe cannot say: 5xx, timeouts, lost answers", () => {
  it("500 after the commit is unknown; the lookup by metadata finds the refund", async () => {
    const { stripe, connector } = await setup();
    expect(await connector(fault("error_after_commit")).refund(request("k1"))).toMatchObject({
      kind: "unknown",
      reason: "server_error",
      httpStatus: 500,
    });
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt: new Date() })).toMatchObject({
      kind: "found",
      refund: { idempotencyKey: "k1", amountCents: 4200, metadata: { execution_id: "exec_k1" } },
      evidence: { provider: "stripe", operation: "refunds.lookup", httpStatus: 200 },
    });
  });

  it("503 not_processed is unknown too: Stripe makes no such statement, whatever the sandbox says", async () => {
    const { s, connector } = await setup();
    expect(await connector(fault("error_before_commit")).refund(request("k1"))).toMatchObject({
      kind: "unknown",
      reason: "server_error",
      httpStatus: 503,
    });
    expect(await listRefunds(s.url)).toHaveLength(0);
  });

  it("a timeout is unknown; while the request may be in flight an empty search is unknown, then it is found", async () => {
    const { stripe, connector } = await setup();
    const sentAt = new Date();
    expect(await connector({ timeoutMs: 200, ...fault("latency=600") }).refund(request("k1"))).toMatchObject({
      kind: "unknown",
      reason: "timeout",
    });
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt })).toMatchObject({
      kind: "unknown",
      reason: "in_flight",
    });
    await waitFor(async () => (await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt })).kind === "found");
  });

  it("a dropped answer is unknown (the package's one retry of a closed connection goes under the same key)", async () => {
    const { s, connector } = await setup();
    expect(await connector(fault("drop_response")).refund(request("k1"))).toMatchObject({
      kind: "unknown",
      reason: "connection_lost",
    });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("a provider that cannot be reached is failed unreachable (the request never left); its lookup is unknown", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const stripe = new StripePaymentConnector({ apiKey, apiBase: `http://127.0.0.1:${port}/stripe`, timeoutMs: 2_000 });
    expect(await stripe.refund(request("k1"))).toMatchObject({
      kind: "failed",
      reason: "unreachable",
      retryable: true,
    });
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42" })).toMatchObject({
      kind: "unknown",
      reason: "unreachable",
    });
  });
});

describe("the lookup by metadata", () => {
  it("not found is final only once the request can no longer be in flight", async () => {
    const { stripe } = await setup({ inFlightMs: 60_000 });
    await stripe.refund(request("other"));
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt: new Date() })).toMatchObject({
      kind: "unknown",
      reason: "in_flight",
    });
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt: longAgo })).toMatchObject({
      kind: "not_found",
      evidence: { provider: "stripe", httpStatus: 200, idempotencyKey: "k1" },
    });
    // Never sent: nothing can be in flight.
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt: null })).toMatchObject({
      kind: "not_found",
    });
  });

  it("searches page by page, and every refund when the charge is not known", async () => {
    const { s, stripe } = await setup();
    await post(`${s.url}/__sandbox/stripe/charges`, {
      id: "ch_big",
      amount: 1_000_000,
      currency: "usd",
      customer: "cus_42",
    });
    for (let i = 0; i < 105; i++)
      expect(await stripe.refund(request(`k${i}`, { chargeId: "ch_big", amountCents: 100 }))).toMatchObject({
        kind: "succeeded",
      });
    // k0 is the oldest: on the second page of the newest-first list.
    expect(await stripe.lookupRefund("k0", {}, { chargeId: "ch_big", sentAt: longAgo })).toMatchObject({
      kind: "found",
      refund: { idempotencyKey: "k0", chargeId: "ch_big" },
    });
    expect(await stripe.lookupRefund("k3")).toMatchObject({ kind: "found", refund: { idempotencyKey: "k3" } });
    expect(await stripe.lookupRefund("k1", {}, { chargeId: "ch_42", sentAt: longAgo })).toMatchObject({
      kind: "not_found",
    });
  });

  it("a 500 on the search is unknown, never not found", async () => {
    const { stripe, connector } = await setup();
    await stripe.refund(request("k1"));
    expect(
      await connector({ lookupHeaders: { "X-Sandbox-Fault": "error_after_commit" } }).lookupRefund(
        "k1",
        {},
        {
          chargeId: "ch_42",
        },
      ),
    ).toMatchObject({ kind: "unknown", reason: "server_error", httpStatus: 500 });
  });
});

describe("a chaos run on the Stripe surface", () => {
  it("ends with exactly one refund per execution when every unknown is looked up and retried under its key", async () => {
    const { s, stripe } = await setup({ timeoutMs: 150, inFlightMs: 0 });
    await post(`${s.url}/__sandbox/stripe/charges`, {
      id: "ch_chaos",
      amount: 1_000_000,
      currency: "usd",
      customer: "cus_42",
    });
    await post(`${s.url}/__sandbox/faults`, {
      faults: ["error_before_commit", "error_after_commit", "timeout_after_commit", "drop_response", "latency=5"],
      probability: 0.5,
      seed: 99,
      scope: "all",
    });
    const executions = Array.from({ length: 20 }, (_, i) => `exec_${i}`);
    const ids = new Map<string, string>();
    let unknowns = 0;
    for (const executionId of executions) {
      const r = request(`refund:${executionId}`, {
        chargeId: "ch_chaos",
        amountCents: 100,
        metadata: { executionId, taskId: "task_chaos" },
      });
      for (let attempt = 0; !ids.has(executionId); attempt++) {
        if (attempt >= 50) throw new Error(`no definite outcome for ${executionId} after 50 attempts`);
        const outcome = await stripe.refund(r);
        if (outcome.kind === "succeeded") ids.set(executionId, outcome.refund.id);
        else if (outcome.kind === "failed" && !outcome.retryable) throw new Error(`refused: ${outcome.message}`);
        else if (outcome.kind === "unknown") {
          unknowns++;
          const found = await stripe.lookupRefund(r.idempotencyKey, {}, { chargeId: "ch_chaos", sentAt: null });
          if (found.kind === "found") ids.set(executionId, found.refund.id);
        }
      }
    }
    await post(`${s.url}/__sandbox/faults`, { faults: [] });
    expect(unknowns).toBeGreaterThan(5);
    const refunds = (await listRefunds(s.url)).filter((x) => x.charge_id === "ch_chaos");
    expect(refunds).toHaveLength(executions.length);
    expect(new Set(refunds.map((x) => x.metadata.execution_id))).toEqual(new Set(executions));
    expect(new Set(refunds.map((x) => x.id))).toEqual(new Set(ids.values()));
    expect((await get(`${s.url}/__sandbox/stats`)).json.consistency).toEqual({
      duplicate_refunds_by_execution: 0,
      duplicate_refunds_by_idempotency_key: 0,
    });
  });
});
