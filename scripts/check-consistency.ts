/**
 * `npm run check:consistency`: one read-only pass of the consistency checker
 * (lib/use-cases/monitor/consistency-check.ts) over the configured database
 * (DATABASE_URL, else the embedded PGlite folder, which must not be open in
 * a running server: stop `npm start` first, or point DATABASE_URL at the
 * server), optionally compared with the payment provider's own records.
 * Tenant by tenant: each tenant's ledger on its own connection (row-level
 * security), compared with that tenant's share of the provider's records
 * (the provider account is the deployment's, shared by the tenants).
 *
 *   --tenant <id>          check this tenant only (default: every tenant not deleted)
 *   --provider-url <url>   compare with the sandbox provider at <url>
 *   --provider             … at the configured VERITY_SANDBOX_URL
 *   --grace-ms <ms>        how long past a deadline counts as stuck
 *   --json                 the report as JSON on stdout
 *
 * With --json: one tenant's report as it is with --tenant, else
 * { ok, tenants: { <id>: report } }.
 *
 * Exit codes: 0 consistent, 1 findings, 2 usage error or the database or
 * provider could not be read, or no such tenant (no verdict).
 */
import { parseArgs } from "node:util";
import { openDatabase } from "@/lib/db/client";
import {
  checkConsistency,
  fetchProviderRecords,
  providerRecordsOfTenant,
  type ConsistencyReport,
  type ProviderRecords,
} from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { getEnv } from "@/lib/config/env";
import { listTenants } from "@/lib/stores/tenants";

const usage =
  "usage: npm run check:consistency [-- [--tenant <id>] [--provider | --provider-url <url>] [--grace-ms <ms>] [--json]]";

let args;
try {
  args = parseArgs({
    options: {
      provider: { type: "boolean", default: false },
      "provider-url": { type: "string" },
      "grace-ms": { type: "string" },
      tenant: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  }).values;
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
  process.exit(2);
}
if (args.help) {
  console.log(usage);
  process.exit(0);
}
const graceMs = args["grace-ms"] === undefined ? undefined : Number(args["grace-ms"]);
if (graceMs !== undefined && !(Number.isInteger(graceMs) && graceMs >= 0)) {
  console.error(`--grace-ms must be a whole number of milliseconds\n${usage}`);
  process.exit(2);
}

const env = getEnv();
const providerUrl = args["provider-url"] ?? (args.provider ? env.sandboxUrl : undefined);
let provider: ProviderRecords | null = null;
if (providerUrl) {
  try {
    provider = await fetchProviderRecords(providerUrl);
  } catch (error) {
    console.error(
      `check:consistency could not read the provider's records at ${providerUrl}: ${error instanceof Error ? error.message : String(error)}`,
    );
    process.exit(2);
  }
}

const handle = openDatabase(env.database);
const reports = new Map<string, ConsistencyReport>();
try {
  const tenants = (await listTenants(handle.platformDb)).filter((t) => t.status !== "deleted").map((t) => t.id);
  if (args.tenant !== undefined && !tenants.includes(args.tenant)) {
    console.error(`check:consistency: no tenant ${JSON.stringify(args.tenant)} (tenants: ${tenants.join(", ")})`);
    await handle.close().catch(() => undefined);
    process.exit(2);
  }
  for (const tenantId of args.tenant === undefined ? tenants : [args.tenant]) {
    const own = provider ? await providerRecordsOfTenant(handle.platformDb, tenantId, provider) : null;
    reports.set(tenantId, await checkConsistency(handle.forTenant(tenantId), { provider: own, graceMs }));
  }
} catch (error) {
  // An unmigrated, unreachable or locked database is no verdict on consistency.
  console.error(
    `check:consistency could not read the database: ${error instanceof Error ? error.message : String(error)}`,
  );
  await handle.close().catch(() => undefined);
  process.exit(2);
}
await handle.close();
const ok = [...reports.values()].every((r) => r.ok);
if (args.json)
  console.log(
    JSON.stringify(
      args.tenant !== undefined ? reports.get(args.tenant) : { ok, tenants: Object.fromEntries(reports) },
      null,
      2,
    ),
  );
else
  console.log(
    [...reports].map(([tenantId, report]) => `Tenant ${tenantId}\n${formatConsistencyReport(report)}`).join("\n\n"),
  );
process.exit(ok ? 0 : 1);
