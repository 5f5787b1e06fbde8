/**
 * One refund worker process of tests/postgres/failover.test.ts: the demo
 * refund agent (programs/agent, unmodified) over the SDK, its transport replaced
 * by the engine on one region's database (failover-engine-client.ts), and
 * the sandbox provider over HTTP.
 *
 *   FAILOVER_MODE=run     on the primary: drives its orders' tasks until the
 *                         test SIGKILLs it (the region is lost)
 *   FAILOVER_MODE=resume  on the standby: per task, under its lease, first
 *                         records the calls lost with the primary
 *                         (lib/use-cases/failover/failover.ts), then resumes it
 *
 * Prints one JSON line per task ({task, lost?, report}) and exits 0; 1 on a
 * crash of its own.
 */
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { taskIdOf, type Order } from "@/programs/agent/order";
import type { TaskReport } from "@/programs/agent/refund-agent";
import { openDatabase } from "@/lib/db/client";
import { recordCallsLostWithPrimary, type LostCallReport } from "@/lib/use-cases/failover/failover";
import {
  engineClientOf,
  failoverAgent,
  LEASE_TTL_SECONDS,
  ordersOf,
  plannedCallsOf,
  refundAgentOf,
} from "./failover-agent";

export interface FailoverWorkerLine {
  task: string;
  lost?: { calls: LostCallReport["calls"]; releasedLostIntent: boolean } | { error: string };
  report: TaskReport;
}

async function main(): Promise<void> {
  const env = {
    url: process.env.FAILOVER_DATABASE_URL ?? "",
    sandboxUrl: process.env.FAILOVER_SANDBOX_URL ?? "",
    mode: process.env.FAILOVER_MODE,
    orders: ordersOf(process.env.FAILOVER_ORDERS ?? ""),
    seed: Number(process.env.FAILOVER_SEED ?? 1),
    faults: (process.env.FAILOVER_FAULTS ?? "").split(",").filter(Boolean),
    concurrency: Number(process.env.FAILOVER_CONCURRENCY ?? 4),
  };
  if (!env.url || !env.sandboxUrl || (env.mode !== "run" && env.mode !== "resume")) {
    console.error("failover-refund-worker is started by tests/postgres/failover.test.ts");
    process.exit(2);
  }
  const handle = openDatabase({ kind: "postgres", url: env.url }, { poolSize: env.concurrency + 1 });
  const db = handle.db;
  const client = engineClientOf(db, env.sandboxUrl);
  const agent = refundAgentOf(client, env.sandboxUrl, { seed: env.seed, faults: env.faults });
  // Lookups only: recording the calls lost with the primary never causes an effect.
  const deps = {
    payments: new SandboxPaymentConnector({ baseUrl: env.sandboxUrl, timeoutMs: 3_000 }),
    crm: new SandboxCrmConnector({ baseUrl: env.sandboxUrl, timeoutMs: 3_000 }),
  };

  const runOne = async (order: Order): Promise<FailoverWorkerLine> => {
    const task = taskIdOf(order);
    if (env.mode === "run") return { task, report: await agent.run(order) };
    let lost: FailoverWorkerLine["lost"];
    try {
      // Under the task's lease, renewed while the provider is asked (the SDK's withLease, as the agent holds it).
      // A lease the lost primary's worker held came over with the backup: it is
      // another process's, so the standby's worker waits for it to expire.
      const recorded = await client.withLease(
        task,
        (lease) =>
          recordCallsLostWithPrimary(db, task, plannedCallsOf(order), deps, failoverAgent, {
            fencing_token: lease.fencingToken,
          }),
        {
          ttlSeconds: LEASE_TTL_SECONDS,
          waitMs: (LEASE_TTL_SECONDS + 2) * 1000,
        },
      );
      lost = { calls: recorded.calls, releasedLostIntent: recorded.releasedLostIntent };
    } catch (error) {
      lost = { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
    return { task, lost, report: await agent.resume(task) };
  };

  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(env.concurrency, env.orders.length) }, async () => {
      while (next < env.orders.length) {
        const line = await runOne(env.orders[next++]!);
        process.stdout.write(`${JSON.stringify(line)}\n`);
      }
    }),
  );
  await handle.close();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
