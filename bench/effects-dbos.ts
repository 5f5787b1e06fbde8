/**
 * bench:effects' peer: a DBOS Transact workflow of one step making the same
 * refund call to the same sandbox (POST /v1/refunds with an Idempotency-Key,
 * through the same connector), run as its own process on the same PostgreSQL
 * with its own system database. DBOS records the workflow's start, the
 * step's output and the workflow's end there. bench/effects.ts forks this
 * file and drives it over IPC, so its rounds alternate with the ledger's and
 * the direct calls' in the same run.
 *
 *   argv: <system database url> <sandbox url> <pool size>
 *   parent → { run: { workers, total } } | { stop: true }
 *   child  → { ready: true } | { done: { count, seconds, latencies } } | { failed: message }
 */
import { DBOS } from "@dbos-inc/dbos-sdk";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";

const [systemDatabaseUrl, sandboxUrl, poolSize] = process.argv.slice(2);
if (!systemDatabaseUrl || !sandboxUrl || !poolSize || !process.send)
  throw new Error(
    "bench/effects-dbos.ts is forked by bench/effects.ts with a database url, a sandbox url and a pool size",
  );
const send = (message: unknown) => process.send!(message);

const payments = new SandboxPaymentConnector({ baseUrl: sandboxUrl });
const request = { amount_cents: 1000, currency: "usd", charge_id: "ch_bench", customer_id: "cus_bench" };

async function refundWorkflow(n: number): Promise<string> {
  // The step's key is the workflow's id: a recovered workflow calls again under the same key.
  const key = `dbos-${DBOS.workflowID}`;
  return DBOS.runStep(
    async () => {
      const outcome = await payments.refund({
        idempotencyKey: key,
        amountCents: request.amount_cents,
        currency: request.currency,
        chargeId: request.charge_id,
        customerId: request.customer_id,
        metadata: { executionId: key, taskId: `dbos-${n}` },
      });
      if (outcome.kind !== "succeeded") throw new Error(`refund ${outcome.kind}`);
      return outcome.refund.id;
    },
    { name: "refund" },
  );
}
const refund = DBOS.registerWorkflow(refundWorkflow, { name: "refund" });

DBOS.setConfig({
  name: "verity-bench-effects",
  systemDatabaseUrl,
  systemDatabasePoolSize: Number(poolSize),
  logLevel: "error",
});
await DBOS.launch();

let call = 0;
async function drive(workers: number, total: number) {
  const latencies: number[] = [];
  const each = Math.ceil(total / workers);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = 0; i < each; i++) {
        const t = performance.now();
        await refund(++call);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { count: each * workers, seconds: (performance.now() - start) / 1000, latencies };
}

process.on("message", (message: { run?: { workers: number; total: number }; stop?: boolean }) => {
  if (message.stop) {
    void DBOS.shutdown().then(() => process.exit(0));
    return;
  }
  if (message.run)
    drive(message.run.workers, message.run.total).then(
      (done) => send({ done }),
      (error: unknown) => send({ failed: error instanceof Error ? error.message : String(error) }),
    );
});
send({ ready: true });
