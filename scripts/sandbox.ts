/**
 * `npm run sandbox`: the sandbox payment provider and CRM on its own
 * (SANDBOX_PORT, default 4010), journaled in .data/sandbox/ so refunds survive
 * a restart. Settings: programs/sandbox/config.ts.
 */
import { sandboxOptionsFromEnv } from "@/programs/sandbox/config";
import { startSandbox } from "@/programs/sandbox/server";

const options = sandboxOptionsFromEnv(process.env);
// Requests are logged at debug (VERITY_LOG_LEVEL=debug); the lines below are this program's own output (chaos tests read the URL).
const sandbox = await startSandbox(options);
console.log(`sandbox: listening on ${sandbox.url}`);
console.log(
  `sandbox: journal ${options.journalPath ?? "(in memory)"}${options.webhookUrl ? `, webhooks to ${options.webhookUrl}` : ""}`,
);
if (options.faults)
  console.log(
    `sandbox: global faults ${options.faults.faults.join(", ")} (probability ${options.faults.probability ?? 1})`,
  );

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}
