import { describe, expect, it } from "vitest";
import { orderOf } from "@/programs/agent/order";
import { RefundAgent } from "@/programs/agent/refund-agent";
import { checkConsistency, fetchProviderRecords } from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { reconcileDue } from "@/lib/use-cases/reconciliation/reconciler";
import type { Actor } from "@/lib/model/actor";
import { connectorsFor } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { EngineBackedClient } from "@/tests/postgres/failover-engine-client";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * The demo refund agent (programs/agent, unmodified: lookup, refund, customer
 * note, through the SDK's protocol served in-process by the engine) meets
 * every provider fault on its refund and its note; the reconciler and a
 * resumed agent settle what it left. Then the consistency checker, with the
 * provider's refunds AND notes, must find nothing: the agent's path, not
 * only the chaos worker's, keeps every promise.
 */
const db = useTestDatabase();
const refundBot: Actor = { identity: "spiffe://verity.test/agent/refund-bot", kind: "agent" };
const faults = [
  "drop_response",
  "timeout_after_commit",
  "error_before_commit",
  "error_after_commit",
  "duplicate_webhook",
];

describe("the refund agent's runs under provider faults", () => {
  it(
    "leave nothing the consistency checker can find, refunds and customer notes compared with the provider",
    { timeout: 120_000 },
    async () => {
      const s = await sandbox();
      const agent = (seed: number) =>
        new RefundAgent({
          client: new EngineBackedClient(db, refundBot, { callTimeoutMs: 1_000, provider: connectorsFor(s.url) }),
          sandboxUrl: s.url,
          identity: refundBot.identity,
          callTimeoutMs: 1_000,
          leaseTtlSeconds: 30,
          faults,
          faultRate: seed === 0 ? 0 : 0.7,
          seed,
          log: () => undefined,
        });
      const orders = Array.from({ length: 12 }, (_, i) => orderOf(`consistency-${i}`, 1_000 + i * 100, "usd"));
      const first = await Promise.all(orders.map((order, i) => agent(i % 4).run(order)));

      // What a deployment does next: the server's reconciler settles the unknown outcomes, the agent resumes its tasks.
      for (let round = 0; round < 3; round++) {
        await reconcileDue(db, connectorsFor(s.url), { now: new Date(Date.now() + 3_600_000), sentTimeoutMs: 1_000 });
        const resumer = agent(0);
        for (const taskId of await resumer.findResumable()) await resumer.resume(taskId);
      }

      const report = await checkConsistency(db, { provider: await fetchProviderRecords(s.url) });
      expect(report.findings, formatConsistencyReport(report)).toEqual([]);
      // The runs really met the faults, and the provider's notes were compared too.
      expect(first.flatMap((r) => r.faults).length).toBeGreaterThan(0);
      expect(report.counts.providerRefunds).toBeGreaterThan(0);
      expect(report.counts.providerNotes).toBeGreaterThan(0);
      expect(report.checks.provider.examined).toBe(
        (report.counts.providerRefunds ?? 0) + (report.counts.providerNotes ?? 0),
      );
    },
  );
});
