/**
 * `npm run scale-out`: several Verity servers on one PostgreSQL database
 * behind HAProxy, on this machine, for a person to try what
 * docs/scale-out.md describes (tests/live/scale-out.test.ts checks the same
 * fleet under a SIGKILL).
 *
 *   npm run scale-out [-- --servers 3 --port 4000]
 *
 * Makes a fresh database `verity_scale_<random>` on the PostgreSQL server of
 * TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres),
 * starts one sandbox provider for all, the servers (`scripts/start.ts`, demo
 * data on) at once with the same secrets and keyring, and HAProxy (Debian's
 * `haproxy`; `npx tsx scripts/test-prerequisites.ts` installs it) on --port
 * with its statistics page. Ctrl-C stops everything and drops the database.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { demoUsers } from "@/lib/config/demo-accounts";
import { startSandbox } from "@/programs/sandbox/server";
import { isConsoleBuildStale } from "./console-build";
import { haproxyConfig } from "./haproxy-config";

const { values: args } = parseArgs({
  options: { servers: { type: "string", default: "3" }, port: { type: "string", default: "4000" } },
});
const count = Number(args.servers);
const port = Number(args.port);
if (!Number.isInteger(count) || count < 1 || count > 9 || !Number.isInteger(port) || port < 1024 || port > 65_000) {
  console.error("usage: npm run scale-out [-- --servers 1..9 --port 1024..65000]");
  process.exit(2);
}
const haproxyPath = process.env.HAPROXY_PATH ?? "/usr/sbin/haproxy";
if (!existsSync(haproxyPath)) {
  console.error(`${haproxyPath} is missing: \`npx tsx scripts/test-prerequisites.ts\` installs Debian's haproxy`);
  process.exit(1);
}

const root = process.cwd();
const workDir = path.join(root, ".data", "scale-out");
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const dbName = `verity_scale_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${dbName}` }).toString();
const lbUrl = `http://127.0.0.1:${port}`;
const secret = () => randomBytes(30).toString("base64url");
const webhookSecret = secret();
const sandbox = await startSandbox({
  port: port + count + 1,
  host: "127.0.0.1",
  journalPath: path.join(workDir, "sandbox", "journal.jsonl"),
  webhookUrl: `${lbUrl}/api/v1/events/sandbox`,
  webhookSecret,
});
// What several machines share besides the database (docs/scale-out.md, "What the servers share").
const shared: Record<string, string> = {
  DATABASE_URL: databaseUrl,
  NEXTAUTH_URL: lbUrl,
  NEXTAUTH_SECRET: secret(),
  VERITY_OUTBOX_SECRET: secret(),
  VERITY_LOOKUP_SECRET: secret(),
  VERITY_SANDBOX_WEBHOOK_SECRET: webhookSecret,
  VERITY_CHECKPOINT_KEYS: `scale-1=${secret()}`,
  VERITY_KEYRING_FILE: path.join(workDir, "keyring.json"),
  VERITY_START_SANDBOX: "false",
  VERITY_SANDBOX_URL: sandbox.url,
  VERITY_DEMO_DATA: "true",
  VERITY_DEMO_AGENT_RUNS: "false",
};

interface Running {
  name: string;
  port: number;
  child: ChildProcess;
}
const servers: Running[] = [];
let haproxy: ChildProcess | null = null;

function startServer(i: number): Running {
  const name = `s${i + 1}`;
  const serverPort = port + 1 + i;
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    env: { ...process.env, ...shared, PORT: String(serverPort), VERITY_DATA_DIR: path.join(workDir, name) },
    stdio: ["ignore", "inherit", "inherit"],
    // Its own process group: `kill -9 -<pid>` is a machine lost.
    detached: true,
  });
  const running = { name, port: serverPort, child };
  servers.push(running);
  return running;
}

async function healthy(server: Running): Promise<void> {
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited (${server.child.exitCode})`);
    const res = await fetch(`http://127.0.0.1:${server.port}/api/health`).catch(() => null);
    if (res?.ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

let stopping = false;
async function stopAll(code: number): Promise<never> {
  if (stopping) process.exit(code);
  stopping = true;
  console.log("\nscale-out: stopping the servers, HAProxy and the sandbox; dropping the database");
  haproxy?.kill("SIGTERM");
  for (const s of servers)
    try {
      process.kill(-s.child.pid!, "SIGTERM");
    } catch {
      // already gone (killed by hand, as the doc suggests)
    }
  await Promise.all(
    servers.map((s) =>
      s.child.exitCode !== null || s.child.signalCode !== null
        ? undefined
        : new Promise((resolve) => s.child.once("exit", resolve)),
    ),
  );
  await sandbox.close();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  process.exit(code);
}
process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));

try {
  // N builds into one .next would corrupt it: on a stale build, the first server builds alone.
  if (isConsoleBuildStale(root)) await healthy(startServer(0));
  const first = servers.length;
  const rest = Array.from({ length: count - first }, (_, i) => startServer(first + i));
  await Promise.all(rest.map(healthy));
} catch (error) {
  console.error(`scale-out: ${error instanceof Error ? error.message : String(error)}`);
  await stopAll(1);
}

const config = path.join(workDir, "haproxy.cfg");
writeFileSync(
  config,
  haproxyConfig({
    port,
    backends: servers.map((s) => ({ name: s.name, address: `127.0.0.1:${s.port}` })),
    statsUri: "/__haproxy",
  }),
);
const checked = spawnSync(haproxyPath, ["-c", "-q", "-f", config], { encoding: "utf8" });
if (checked.status !== 0) {
  console.error(`scale-out: haproxy refused ${config}: ${checked.stderr}`);
  await stopAll(1);
}
haproxy = spawn(haproxyPath, ["-db", "-f", config], { stdio: ["ignore", "inherit", "inherit"] });
haproxy.on("exit", (code) => {
  if (!stopping) {
    console.error(`scale-out: haproxy exited (${code})`);
    void stopAll(1);
  }
});

console.log(`
scale-out: ${count} Verity servers on one PostgreSQL database (${dbName}) behind HAProxy
  console and API  ${lbUrl}   (X-Served-By names the server that answered)
  HAProxy stats    ${lbUrl}/__haproxy
  sandbox          ${sandbox.url}
${servers.map((s) => `  ${s.name}  http://127.0.0.1:${s.port}  process group ${s.child.pid}  (kill -9 -${s.child.pid} loses it)`).join("\n")}
  sign in as ${demoUsers.map((u) => `${u.username} / ${u.password}`).join(", ")}
  npm run agent -- --tasks 5 with VERITY_URL=${lbUrl} VERITY_SANDBOX_URL=${sandbox.url}
Ctrl-C stops everything.`);
