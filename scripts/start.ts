/**
 * `npm start` (and `npm run dev` with --dev): the whole quick start in one
 * command. Migrates the configured database (the embedded PGlite folder is
 * created on first run); in the quick start (embedded database on a
 * loopback address, or VERITY_DEMO_DATA=true) seeds demo data (or completes
 * a seed an interrupted start left half done), anywhere else refuses a
 * database holding the demo accounts and, with no accounts yet, prints a
 * one-time link for the first admin; builds the console when the sources are
 * newer than the last build, then serves it. The database is closed before
 * Next starts: a PGlite folder belongs to one process at a time. On the
 * first start of a demo database, once the console answers, the demo refund
 * agent runs against it (programs/demo/), so the console shows real refunds,
 * reconciliations and frozen refunds; a start stopped before they were done
 * runs them again.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { openDatabase } from "@/lib/db/client";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { migrateDatabase, MigrationError } from "@/lib/db/migrate";
import { applyLiveUpdatesSetting } from "@/lib/db/notifications";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { isLongHistoryComplete, seedLongHistoryTask } from "@/programs/demo/long-history";
import { planDemoRuns } from "@/programs/demo/plan";
import {
  describeDemoResult,
  isDemoDone,
  markDemoDone,
  runDemoAgentRuns,
  stopDemoAgents,
  waitUntilServing,
} from "@/programs/demo/runner";
import { getAuthSecret, getEnv, getSandboxWebhookSecret } from "@/lib/config/env";
import { startSandbox } from "@/programs/sandbox/server";
import { ensureDemoData } from "@/programs/seed/seed";
import { isConsoleBuildStale } from "./console-build";
import { prepareAccountsAtStart, type AccountsAtStart } from "@/lib/use-cases/people/prepare-accounts-at-start";
import { demoAgent, demoUsers } from "@/lib/config/demo-accounts";

const dev = process.argv.includes("--dev");
const env = getEnv();
const root = process.cwd();

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: "inherit", env: process.env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function buildInBackground(): Promise<number> {
  console.log("verity: building the console while the long history is seeded…");
  const child = spawn("npx", ["next", "build"], { stdio: "inherit", env: process.env });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

if (!existsSync(path.join(root, "lib", "generated", "prisma", "client.ts"))) run("npm", ["run", "db:generate"]);

const where =
  env.database.kind === "pglite"
    ? `embedded PostgreSQL (PGlite) in ${path.relative(root, env.database.dir)}`
    : "PostgreSQL from DATABASE_URL";
console.log(`verity: database: ${where}`);
console.log(
  env.VERITY_DEMO_DATA
    ? "verity: demo data on (the quick start: embedded database, loopback address; VERITY_DEMO_DATA=false turns it off)"
    : "verity: demo data off (no demo accounts are created or accepted)",
);
// A fresh embedded folder is built aside and renamed into place: a kill during initdb leaves none, never half of one.
if (env.database.kind === "pglite" && (await ensureEmbeddedDataDir(env.database.dir)))
  console.log("verity: created the embedded database");
const handle = openDatabase(env.database);
// The id of this database's seed (programs/seed/seed.ts seedMarkerOf), null without demo data.
let seedId: string | null = null;
// Outside the demo: the accounts this start found (prepareAccountsAtStart), a setup link among them.
let accounts: AccountsAtStart | null = null;
// Not process.exitCode: closing PGlite resets it (its emscripten exit sets it to 0).
let refused = false;
try {
  // Each migration commits with its record, and the seed resumes until its
  // marker is written: a start killed anywhere in here is completed by the next.
  const applied = await migrateDatabase(handle.adapterFactory, { log: (line) => console.log(`verity: ${line}`) });
  if (applied.length) console.log(`verity: applied migrations ${applied.join(", ")}`);
  // One switch in the database for every server on it (docs/live-updates.md): set, it is written; unset, kept.
  const live = await applyLiveUpdatesSetting(handle.platformDb, env.VERITY_LIVE_UPDATES);
  console.log(
    `verity: live updates ${live.on ? "on" : "off (the console's pages poll)"}${live.changed ? `: turned ${live.on ? "on" : "off"} by this start (VERITY_LIVE_UPDATES) for every server on this database` : ""}`,
  );
  // Before the seed: its tasks are created under the registry's versions.
  const registered = await registerBuiltInWorkflows(handle.db);
  if (registered.length) console.log(`verity: registered the shipped workflows ${registered.join(", ")}`);
  // The shipped tools likewise (idempotent: an unchanged definition writes nothing).
  const tools = await registerBuiltInTools(handle.db);
  if (tools.length) console.log(`verity: registered the shipped tools ${tools.join(", ")}`);
  if (env.VERITY_DEMO_DATA) {
    const seed = await ensureDemoData(handle, { extraTasks: 40 });
    seedId = seed.seedId;
    if (seed.seededNow) console.log(`verity: seeded ${seed.tasks} demo tasks`);
    if (env.VERITY_E2E_LONG_HISTORY > 0 && !(await isLongHistoryComplete(handle.db, env.VERITY_E2E_LONG_HISTORY))) {
      // Minutes of transitions on a busy machine, and the build needs no
      // database: build meanwhile, so the wait is the longer of the two, not their sum.
      const building = !dev && isConsoleBuildStale(root) ? buildInBackground() : null;
      const long = await seedLongHistoryTask(handle.db, env.VERITY_E2E_LONG_HISTORY, (line) =>
        console.log(`verity: ${line}`),
      );
      console.log(
        `verity: long-history task ${long.taskId}: ${long.events} events through the engine in ${(long.ms / 1000).toFixed(1)} s`,
      );
      if (building && (await building) !== 0) process.exit(1);
    }
  } else {
    accounts = await prepareAccountsAtStart(handle.db);
    if (accounts.kind === "refused") {
      console.error(`verity: refusing to start: ${accounts.message}`);
      refused = true;
    }
  }
} catch (error) {
  if (!(error instanceof MigrationError)) throw error;
  console.error(`verity: ${error.message}`);
  refused = true;
} finally {
  await handle.close();
}
if (refused) process.exit(1);

// Once per seeded demo database, until the runs are done (programs/demo/runner.ts isDemoDone).
const demoAgentRuns =
  env.VERITY_DEMO_DATA && env.VERITY_DEMO_AGENT_RUNS && seedId !== null && !isDemoDone(env.dataDir, seedId);

if (!dev && isConsoleBuildStale(root)) {
  console.log("verity: building the console (first start, or sources changed)…");
  run("npx", ["next", "build"]);
}

const url = env.NEXTAUTH_URL ?? `http://localhost:${env.PORT}`;

// The sandbox payment provider and CRM: the "external world" the demo agent
// refunds through, journaled in the data folder so its refunds survive a
// restart. It runs in this process, beside the Next server it feeds webhooks.
const sandbox = env.VERITY_START_SANDBOX
  ? await startSandbox({
      port: env.SANDBOX_PORT,
      host: "127.0.0.1",
      journalPath: path.join(env.dataDir, "sandbox", "journal.jsonl"),
      webhookUrl: `http://localhost:${env.PORT}/api/v1/events/sandbox`,
      webhookSecret: getSandboxWebhookSecret(),
      // Its Stripe surface's events, signed as Stripe signs them, for a Verity set up with STRIPE_API_BASE=<sandbox>/stripe.
      ...(env.STRIPE_WEBHOOK_SECRET
        ? {
            stripeWebhookUrl: `http://localhost:${env.PORT}/api/v1/events/stripe`,
            stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET,
          }
        : {}),
      log: (line) => console.log(`sandbox: ${line}`),
    })
  : undefined;
if (sandbox) console.log(`verity: sandbox payment provider and CRM on ${sandbox.url}`);
console.log(`\nverity: console on ${url} (listening on ${env.VERITY_HOST}:${env.PORT})`);
if (env.VERITY_DEMO_DATA) {
  console.log("verity: demo logins (username / password):");
  for (const u of demoUsers) console.log(`  ${u.role.padEnd(9)} ${u.username} / ${u.password}`);
  console.log(`verity: demo agent token (${demoAgent.identity}): ${demoAgent.token}\n`);
}
if (accounts?.kind === "setup") {
  // The link is the only copy of the token (only its sha256 is stored): printed once, used once.
  console.log("verity: no accounts yet. Create the first admin within the hour at this one-time link:");
  console.log(`  ${url}/setup?token=${accounts.token}`);
  console.log("  (or: npm run -s verity -- users create <username> --role admin --password-stdin)\n");
}

// Production: scripts/serve.mjs, Next's handler behind our own HTTP server,
// which serves agents' API requests without Next's pipeline (issue 16, item
// 3); development: Next's own dev server. Both under node directly, not npx:
// the signal below must reach the server itself. Through npx (npm exec, then
// sh) SIGTERM stopped the wrappers and left the server running, holding the
// port and the PGlite folder that the next start then opened from a second process.
const serverArgs = dev
  ? [
      path.join(root, "node_modules", "next", "dist", "bin", "next"),
      "dev",
      "-p",
      String(env.PORT),
      "-H",
      env.VERITY_HOST,
    ]
  : [path.join(root, "scripts", "serve.mjs")];
const next = spawn(process.execPath, serverArgs, {
  stdio: "inherit",
  env: {
    ...process.env,
    PORT: String(env.PORT),
    VERITY_HOST: env.VERITY_HOST,
    NEXTAUTH_URL: url,
    NEXTAUTH_SECRET: getAuthSecret(),
    VERITY_SANDBOX_URL: env.sandboxUrl,
    VERITY_SANDBOX_WEBHOOK_SECRET: getSandboxWebhookSecret(),
  },
});
const demoStop = new AbortController();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    demoStop.abort();
    stopDemoAgents();
    next.kill(signal);
  });
}
if (demoAgentRuns) void runDemo();
next.on("exit", (code) => {
  void (sandbox?.close() ?? Promise.resolve()).finally(() => process.exit(code ?? 0));
});

/**
 * The demo agent runs, beside the console: agents need the server up (they
 * work over HTTP), and the console serves whatever happens here. A failure
 * is logged, never fatal: the console does not depend on the demo.
 */
async function runDemo(): Promise<void> {
  const log = (line: string) => console.log(`verity demo: ${line}`);
  // The agents talk to this machine's server, whatever public URL NEXTAUTH_URL names.
  const verityUrl = `http://localhost:${env.PORT}`;
  try {
    const runs = planDemoRuns();
    if (!(await waitUntilServing(verityUrl, demoStop.signal))) return;
    log(
      `${runs.length} runs of the demo refund agent (npm run agent) with faults; the console shows them within a minute or so`,
    );
    const result = await runDemoAgentRuns(runs, {
      verityUrl,
      sandboxUrl: env.sandboxUrl,
      token: demoAgent.token,
      identity: demoAgent.identity,
      root,
      env: process.env,
      // Between resume rounds, one reconciler pass (5 s unless configured; the loop may be off).
      settleIntervalMs: Math.max(1_000, env.VERITY_RECONCILE_INTERVAL_MS || 5_000),
      signal: demoStop.signal,
      log,
    });
    log(describeDemoResult(result));
    if (result.finished && seedId)
      markDemoDone(env.dataDir, seedId, { tasks: Object.fromEntries(result.statuses), deviations: result.deviations });
  } catch (error) {
    log(
      `stopped: ${error instanceof Error ? error.message : String(error)}; the console is unaffected (npm run agent -- --resume --run-id demo continues the runs)`,
    );
  }
}
