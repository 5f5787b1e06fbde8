import { describe, expect, it } from "vitest";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { StripePaymentConnector, type StripeConnectorOptions } from "@/lib/connectors/stripe/payment";
import { checkConsistency, fetchProviderRecords } from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { reconcileDue } from "@/lib/use-cases/reconciliation/reconciler";
import type { Actor } from "@/lib/model/actor";
import { orderOf } from "@/programs/agent/order";
import { RefundAgent } from "@/programs/agent/refund-agent";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { EngineBackedClient } from "@/tests/postgres/failover-engine-client";
import { get, listRefunds, post, sandbox } from "@/tests/sandbox/helpers";

/**
 * The demo refund agent on Stripe, end to end: it refunds through the Stripe
 * connector (as scripts/agent.ts does with VERITY_PAYMENTS_PROVIDER=stripe)
 * against the sandbox's Stripe surface, the engine (served in-process, as in
 * consistency-agent.test.ts) confirms and reconciles through the same
 * connector, and every provider fault meets the refunds. Then the
 * consistency checker, given the provider's records, must find nothing, and
 * every order is refunded exactly once.
 */
const db = useTestDatabase();
const refundBot: Actor = { identity: "spiffe://verity.test/agent/refund-bot", kind: "agent" };
const faults = ["drop_response", "timeout_after_commit", "error_before_commit", "error_after_commit"];

describe("the refund agent with VERITY_PAYMENTS_PROVIDER=stripe", () => {
  it(
    "refunds each order once through Stripe's API, under faults, and leaves nothing for the checker",
    { timeout: 120_000 },
    async () => {
      const s = await sandbox();
      const orders = Array.from({ length: 8 }, (_, i) => orderOf(`stripe-${i}`, 1_000 + i * 100, "usd"));
      for (const o of orders)
        await post(`${s.url}/__sandbox/stripe/charges`, {
          id: o.chargeId,
          amount: o.amountCents,
          currency: o.currency,
          customer: o.customerId,
        });
      const stripe = (options: Partial<StripeConnectorOptions> = {}) =>
        new StripePaymentConnector({ apiKey: "sk_test_verity", apiBase: `${s.url}/stripe`, ...options });
      // Every request of the agent has ended (answered, or timed out after the sandbox committed) before the
      // server looks: nothing can be in flight, and the test moves the reconciler's clock an hour on.
      const server: ConnectorDeps = {
        payments: stripe({ inFlightMs: 0 }),
        crm: new SandboxCrmConnector({ baseUrl: s.url }),
      };
      const agent = (seed: number) =>
        new RefundAgent({
          client: new EngineBackedClient(db, refundBot, { callTimeoutMs: 1_000, provider: server }),
          sandboxUrl: s.url,
          identity: refundBot.identity,
          callTimeoutMs: 1_000,
          leaseTtlSeconds: 30,
          faults,
          faultRate: seed === 0 ? 0 : 0.7,
          seed,
          payments: (faultHeader) => stripe(faultHeader ? { headers: { "X-Sandbox-Fault": faultHeader } } : {}),
          log: () => undefined,
        });
      const first = await Promise.all(orders.map((order, i) => agent(i % 4).run(order)));

      for (let round = 0; round < 3; round++) {
        await reconcileDue(db, server, { now: new Date(Date.now() + 3_600_000), sentTimeoutMs: 1_000 });
        const resumer = agent(0);
        for (const taskId of await resumer.findResumable()) await resumer.resume(taskId);
      }

      const report = await checkConsistency(db, { provider: await fetchProviderRecords(s.url) });
      expect(report.findings, formatConsistencyReport(report)).toEqual([]);
      expect(first.flatMap((r) => r.faults).length).toBeGreaterThan(0);
      const refunds = await listRefunds(s.url);
      expect(refunds.map((r) => r.charge_id).sort()).toEqual(orders.map((o) => o.chargeId).sort());
      // Made through the Stripe surface: the key is in the metadata Stripe's lookup searches.
      expect(refunds.every((r) => r.metadata.idempotency_key === r.idempotency_key)).toBe(true);
      expect((await get(`${s.url}/__sandbox/stats`)).json.consistency).toEqual({
        duplicate_refunds_by_execution: 0,
        duplicate_refunds_by_idempotency_key: 0,
      });
      const tasks = await db.task.findMany({ where: { id: { in: orders.map((o) => `refund-${o.orderId}`) } } });
      expect(tasks.map((t) => t.status).sort()).toEqual(orders.map(() => "COMPLETED"));
    },
  );
});
