import { intentIdOf, noteRequestOf, orderOf, refundRequestOf, type Order } from "@/programs/agent/order";
import { NOTE_CALL, REFUND_CALL, refundSubtasksOf } from "@/programs/agent/plan";
import { RefundAgent } from "@/programs/agent/refund-agent";
import type { Db } from "@/lib/db/client";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { PlannedCall } from "@/lib/use-cases/failover/failover";
import type { Actor } from "@/lib/model/actor";
import { EngineBackedClient } from "./failover-engine-client";

/**
 * The refund agent of tests/postgres/failover.test.ts, shared by the test
 * and its worker processes (which must not be imported: they run on load).
 */

/** Every worker of both regions is the same agent: a standby worker re-acquires the leases its lost twin held. */
export const failoverAgent: Actor = { identity: "spiffe://verity.test/agent/failover-refunds", kind: "agent" };
export const LEASE_TTL_SECONDS = 10;
const CALL_TIMEOUT_MS = 5_000;

/** Orders travel between processes as `<order id>:<amount in cents>,…`. */
export function orderSpecOf(orders: readonly Order[]): string {
  return orders.map((o) => `${o.orderId}:${o.amountCents}`).join(",");
}

export function ordersOf(spec: string): Order[] {
  return spec
    .split(",")
    .filter(Boolean)
    .map((item) => {
      const [id, cents] = item.split(":");
      return orderOf(id!, Number(cents), "usd");
    });
}

/** The calls of the refund agent's plan (programs/agent/plan.ts), in order, as it records them. */
export function plannedCallsOf(order: Order): PlannedCall[] {
  return [
    { tool_call_id: REFUND_CALL, tool: "payments.refund", request: refundRequestOf(order), next_status: "RUNNING" },
    { tool_call_id: NOTE_CALL, tool: "crm.add_note", request: noteRequestOf(order), next_status: "VALIDATING" },
  ];
}

/** `sandboxUrl`: the provider the agent calls, which the engine asks too. */
export function engineClientOf(db: Db, sandboxUrl: string): EngineBackedClient {
  const provider = {
    payments: new SandboxPaymentConnector({ baseUrl: sandboxUrl, timeoutMs: CALL_TIMEOUT_MS }),
    crm: new SandboxCrmConnector({ baseUrl: sandboxUrl, timeoutMs: CALL_TIMEOUT_MS }),
  };
  return new EngineBackedClient(db, failoverAgent, { callTimeoutMs: CALL_TIMEOUT_MS, provider });
}

/** The task RefundAgent.run creates first, with the same body, so the agent's own create is then a replay. */
export async function createRefundTask(client: EngineBackedClient, order: Order, taskId: string): Promise<void> {
  await client.createTask({
    workflow: "agent-task",
    taskId,
    intentId: intentIdOf(order),
    subtasks: refundSubtasksOf(order),
  });
}

export function refundAgentOf(
  client: EngineBackedClient,
  sandboxUrl: string,
  options: { seed: number; faults: string[] },
): RefundAgent {
  return new RefundAgent({
    client,
    sandboxUrl,
    identity: failoverAgent.identity,
    callTimeoutMs: CALL_TIMEOUT_MS,
    leaseTtlSeconds: LEASE_TTL_SECONDS,
    // A resumed task may still be under a lost worker's lease: wait it out.
    leaseWaitMs: (LEASE_TTL_SECONDS + 2) * 1000,
    faults: options.faults,
    faultRate: options.faults.length ? 1 : 0,
    seed: options.seed,
    log: () => {},
  });
}
