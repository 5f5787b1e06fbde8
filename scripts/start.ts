/**
 * `npm start` (and `npm run dev` with --dev): the whole quick start in one
 * command. Migrates the configured database (the embedded PGlite folder is
 * created on first run), seeds demo data into an empty one, builds the
 * console when the sources are newer than the last build, then serves it.
 * The database is closed before Next starts: a PGlite folder belongs to one
 * process at a time.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { openDatabase } from "@/lib/db";
import { migrateDatabase } from "@/lib/db/migrate";
import { getAuthSecret, getEnv, getSandboxWebhookSecret } from "@/lib/env";
import { startSandbox } from "@/lib/sandbox/server";
import { demoAgent, demoUsers, isSeeded, seedDemoData } from "@/lib/seed";

const dev = process.argv.includes("--dev");
const env = getEnv();
const root = process.cwd();

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: "inherit", env: process.env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function newestMtime(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) {
    if (entry === "node_modules" || entry === "generated") continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  }
  return newest;
}

function buildIsStale(): boolean {
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return true;
  const sources = ["app", "components", "lib", "public", "next.config.js", "package-lock.json", "prisma/schema.prisma"];
  return Math.max(...sources.map((s) => newestMtime(path.join(root, s)))) > statSync(buildId).mtimeMs;
}

if (!existsSync(path.join(root, "lib", "generated", "prisma", "client.ts"))) run("npm", ["run", "db:generate"]);

const where = env.database.kind === "pglite" ? `embedded PostgreSQL (PGlite) in ${path.relative(root, env.database.dir)}` : "PostgreSQL from DATABASE_URL";
console.log(`verity: database: ${where}`);
const handle = openDatabase(env.database);
try {
  const applied = await migrateDatabase(handle.adapterFactory);
  if (applied.length) console.log(`verity: applied migrations ${applied.join(", ")}`);
  if (env.VERITY_DEMO_DATA && !(await isSeeded(handle.db))) {
    const { tasks } = await seedDemoData(handle.db, { extraTasks: 40 });
    console.log(`verity: seeded ${tasks} demo tasks`);
  }
} finally {
  await handle.close();
}

if (!dev && buildIsStale()) {
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
      log: (line) => console.log(`sandbox: ${line}`),
    })
  : undefined;
if (sandbox) console.log(`verity: sandbox payment provider and CRM on ${sandbox.url}`);
console.log(`\nverity: console on ${url}`);
if (env.VERITY_DEMO_DATA) {
  console.log("verity: demo logins (username / password):");
  for (const u of demoUsers) console.log(`  ${u.role.padEnd(9)} ${u.username} / ${u.password}`);
  console.log(`verity: demo agent token (${demoAgent.identity}): ${demoAgent.token}\n`);
}

const next = spawn("npx", ["next", dev ? "dev" : "start", "-p", String(env.PORT)], {
  stdio: "inherit",
  env: {
    ...process.env,
    NEXTAUTH_URL: url,
    NEXTAUTH_SECRET: getAuthSecret(),
    VERITY_SANDBOX_URL: env.sandboxUrl,
    VERITY_SANDBOX_WEBHOOK_SECRET: getSandboxWebhookSecret(),
  },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => next.kill(signal));
next.on("exit", (code) => {
  void (sandbox?.close() ?? Promise.resolve()).finally(() => process.exit(code ?? 0));
});
