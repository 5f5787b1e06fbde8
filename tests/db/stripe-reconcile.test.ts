import { describe, expect, it } from "vitest";
import type { ConnectorDeps } from "@/lib/connectors/effects";
import { performEffect } from "@/lib/connectors/effects";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { StripePaymentConnector, type StripeConnectorOptions } from "@/lib/connectors/stripe/payment";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { agent, executionRow, refund, refundExecution, successMadeAt, taskStatusOf } from "@/tests/helpers/effects";
import { useTestDatabase } from "@/tests/helpers/use-test-database";
import { listRefunds, post, sandbox } from "@/tests/sandbox/helpers";

/**
 * The engine on Stripe: what the worker's report, the reconciler and a retry
 * do with the Stripe connector against the sandbox's Stripe surface. The
 * engine asks the same questions as of the sandbox; the connector answers
 * them from Stripe's refunds of the charge (metadata.idempotency_key), told
 * the charge and the time of sending by lookupEffect.
 */
const db = useTestDatabase();

async function stripeSandbox() {
  const s = await sandbox();
  await post(`${s.url}/__sandbox/stripe/charges`, {
    id: refund.charge_id,
    amount: 100_000,
    currency: refund.currency,
    customer: refund.customer_id,
  });
  const deps = (options: Partial<StripeConnectorOptions> = {}): ConnectorDeps => ({
    payments: new StripePaymentConnector({ apiKey: "sk_test_verity", apiBase: `${s.url}/stripe`, ...options }),
    crm: new SandboxCrmConnector({ baseUrl: s.url }),
  });
  return { s, deps };
}

const unknownAfter = (attemptId: string, error: string) => ({ attempt_id: attemptId, outcome: "unknown", error });

describe("the refund workflow's ledger on Stripe", () => {
  it("a success report is confirmed by Stripe's record before it is recorded", async () => {
    const { deps } = await stripeSandbox();
    const execution = await refundExecution(db);
    const done = await recordOutcome(db, execution.id, await successMadeAt(deps(), execution), agent, deps());
    expect(done.execution.status).toBe("SUCCEEDED");
  });

  it("a 500 after Stripe committed: unknown, then the reconciler finds the refund by metadata → RECONCILED_SUCCEEDED", async () => {
    const { s, deps } = await stripeSandbox();
    const execution = await refundExecution(db);
    const lost = await performEffect(execution, deps({ headers: { "X-Sandbox-Fault": "error_after_commit" } }));
    expect(lost).toMatchObject({ kind: "unknown", reason: "server_error" });
    await recordOutcome(db, execution.id, unknownAfter(execution.attemptId, "500"), agent);
    expect(await taskStatusOf(db, execution.taskId)).toBe("RECONCILING");

    const result = await reconcileExecution(db, execution.id, deps());
    expect(result).toMatchObject({ action: "reconciled_succeeded", lookup: "found" });
    const settled = await executionRow(db, execution.id);
    expect(settled.evidence).toMatchObject({
      source: "lookup",
      record: {
        amount_cents: refund.amount_cents,
        charge_id: refund.charge_id,
        idempotency_key: execution.idempotencyKey,
      },
      provider: { provider: "stripe", operation: "refunds.lookup" },
    });
    expect(await listRefunds(s.url)).toHaveLength(1);
  });

  it("nothing at Stripe while the request may still be in flight → people decide; once it cannot be, a safe retry", async () => {
    const { s, deps } = await stripeSandbox();
    const first = await refundExecution(db);
    expect(await performEffect(first, deps({ headers: { "X-Sandbox-Fault": "error_before_commit" } }))).toMatchObject({
      kind: "unknown",
      reason: "server_error",
    });
    await recordOutcome(db, first.id, unknownAfter(first.attemptId, "503"), agent);
    expect(await reconcileExecution(db, first.id, deps({ inFlightMs: 60_000 }))).toMatchObject({
      action: "needs_human",
      lookup: "unknown",
    });

    const second = await refundExecution(db);
    await performEffect(second, deps({ headers: { "X-Sandbox-Fault": "error_before_commit" } }));
    await recordOutcome(db, second.id, unknownAfter(second.attemptId, "503"), agent);
    // A window of 1 ms: the request of a moment ago can no longer be processing.
    expect(await reconcileExecution(db, second.id, deps({ inFlightMs: 1 }))).toMatchObject({
      action: "reconciled_failed",
      lookup: "not_found",
    });
    expect(await taskStatusOf(db, second.taskId)).toBe("RUNNING");
    expect(await listRefunds(s.url)).toHaveLength(0);
  });
});
