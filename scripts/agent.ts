/**
 * `npm run agent`: the demo refund agent (programs/agent/refund-agent.ts), a
 * client of a running Verity (`npm start`) and its sandbox provider. See
 * `npm run agent -- --help`.
 */
import { parseAgentConfig, usage, UsageError } from "@/programs/agent/config";
import { formatReport, RefundAgent, runRefundAgent } from "@/programs/agent/refund-agent";
import { DeliveryAgent, formatDeliveryReport } from "@/programs/agent/delivery/delivery-agent";
import { runDeliveryAgent } from "@/programs/agent/delivery/run-delivery";
import { getEnv } from "@/lib/config/env";
import { StripePaymentConnector } from "@/lib/connectors/stripe/payment";
import { killAtFaultPoints, VerityClient } from "@/sdk";
import { demoAgent } from "@/lib/config/demo-accounts";

let config;
try {
  config = parseAgentConfig(process.argv.slice(2), process.env, {
    token: demoAgent.token,
    identity: demoAgent.identity,
  });
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n\n${usage}`);
  process.exit(2);
}
if (config === "help") {
  console.log(usage);
  process.exit(0);
}

const env = getEnv();
const sandboxUrl = env.sandboxUrl;
// Where the server reconciles, the agent refunds: Stripe (or the sandbox's Stripe surface) when so configured.
const payments =
  env.VERITY_PAYMENTS_PROVIDER === "stripe"
    ? (faultHeader: string | undefined) =>
        new StripePaymentConnector({
          apiKey: env.STRIPE_API_KEY ?? "",
          apiBase: env.STRIPE_API_BASE,
          ...(faultHeader ? { headers: { "X-Sandbox-Fault": faultHeader } } : {}),
        })
    : undefined;
if (payments && !env.STRIPE_API_KEY) {
  console.error("agent: VERITY_PAYMENTS_PROVIDER=stripe needs STRIPE_API_KEY");
  process.exit(2);
}
const client = new VerityClient({
  baseUrl: config.verityUrl,
  token: config.token,
  faultPoint: killAtFaultPoints(config.killAt, (point) => console.log(`agent: VERITY_FAULT_KILL_AT=${point}: SIGKILL`)),
});
const log = config.verbose ? (line: string) => console.log(line) : () => undefined;

if (config.scenario === "delivery") {
  const releaseService = { baseUrl: sandboxUrl, timeoutMs: config.callTimeoutMs };
  const delivery = new DeliveryAgent({
    client,
    releaseService,
    identity: config.identity,
    leaseTtlSeconds: config.leaseTtlSeconds,
    leaseWaitMs: config.leaseWaitMs,
    log,
  });
  const what = config.resume ? "resuming unfinished deliveries" : `${config.tasks} change(s), run ${config.runId}`;
  console.log(`agent: delivery, ${what} against ${config.verityUrl}, release service ${sandboxUrl}`);
  const { reports, totals } = await runDeliveryAgent(
    delivery,
    {
      client,
      releaseService,
      tasks: config.tasks,
      runId: config.runId,
      resume: config.resume,
      ...(config.resumeRunId ? { resumeRunId: config.resumeRunId } : {}),
      settleWaitMs: config.settleWaitMs,
      log,
    },
    (r) => console.log(formatDeliveryReport(r)),
  );
  const parts = Object.entries(totals)
    .filter(([, n]) => n > 0)
    .map(([outcome, n]) => `${n} ${outcome}`);
  console.log(`agent: ${reports.length} task(s): ${parts.join(", ") || "nothing to do"}`);
  process.exit(totals.error > 0 ? 1 : 0);
}
const agent = new RefundAgent({
  client,
  sandboxUrl,
  identity: config.identity,
  callTimeoutMs: config.callTimeoutMs,
  leaseTtlSeconds: config.leaseTtlSeconds,
  leaseWaitMs: config.leaseWaitMs,
  faults: config.faults,
  faultRate: config.faultRate,
  seed: config.seed,
  webhookUrl: config.webhookUrl,
  ...(payments ? { payments } : {}),
  log,
});

const what = config.resume ? "resuming unfinished tasks" : `${config.tasks} task(s), run ${config.runId}`;
const faults = config.faults.length
  ? `, faults ${config.faults.join(",")} at rate ${config.faultRate} (seed ${config.seed})`
  : "";
const provider = payments ? `Stripe at ${env.STRIPE_API_BASE ?? "api.stripe.com"}` : `sandbox ${sandboxUrl}`;
console.log(`agent: ${what} against ${config.verityUrl}, ${provider}${faults}`);
const { reports, totals } = await runRefundAgent(agent, config, (r) => console.log(formatReport(r)));
const parts = Object.entries(totals)
  .filter(([, n]) => n > 0)
  .map(([outcome, n]) => `${n} ${outcome}`);
console.log(`agent: ${reports.length} task(s): ${parts.join(", ") || "nothing to do"}`);
process.exit(totals.error > 0 ? 1 : 0);
