/**
 * Scale-out, for real (issue 16 item 4; docs/scale-out.md): three Verity
 * servers (`scripts/start.ts`, as `npm start` runs it) started at once on one
 * empty PostgreSQL database, behind HAProxy (Debian's package, started here
 * with a config written here: roundrobin, health checks on /api/health),
 * sharing one sandbox provider and one outbox subscriber, every background
 * loop on (reconcile, verify, outbox, monitor, housekeeping) in every server.
 *
 * Refund agents (programs/agent, with provider faults that leave outcomes
 * unknown) and a signed-in person work through the balancer; one server is
 * SIGKILLed (its whole process group) while they do. Then, from the
 * database and the provider's own records:
 *
 *   - every write a server acknowledged (a 2xx answer to a POST) is there;
 *   - no order was refunded twice at the provider;
 *   - every audit hash chain verifies (`npm run audit:verify`);
 *   - no open alert twice for one fingerprint, no two monitor passes of a
 *     tenant overlapping in time, and not one pass per server per interval;
 *   - every outbox message delivered (at least once) and marked delivered,
 *     none delivered again after it was;
 *   - the person's session cookie is honoured by every server, the killed
 *     one's peers included, before and after the kill.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoAgent, demoUsers } from "@/lib/config/demo-accounts";
import { orderOf } from "@/programs/agent/order";
import { RefundAgent, type TaskReport } from "@/programs/agent/refund-agent";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { VerityClient } from "@/sdk";
import { isConsoleBuildStale } from "@/scripts/console-build";
import { haproxyConfig } from "@/scripts/haproxy-config";
import { createEmptyPostgresDatabase } from "@/tests/helpers/postgres";
import { livePort, startVerityServer, type VerityServer } from "./servers";
import { signInOverHttp } from "@/tests/helpers/http-sign-in";

const run = promisify(execFile);
const HAPROXY = process.env.HAPROXY_PATH ?? "/usr/sbin/haproxy";
const SERVERS = 3;
const AGENTS = 4;
const TASKS_PER_AGENT = 5;
const MONITOR_INTERVAL_MS = 3_000;
const secret = () => randomBytes(30).toString("base64url");

/** A write the balancer answered with 2xx: which server, what it said. */
interface Ack {
  path: string;
  server: string;
  body: Record<string, unknown>;
  at: number;
}

interface Delivery {
  id: string;
  attempt: number;
  at: number;
}

let database: { url: string; drop(): Promise<void> } | null = null;
let sandbox: Sandbox | null = null;
let subscriber: Server | null = null;
let haproxy: ChildProcess | null = null;
const servers: VerityServer[] = [];
const deliveries: Delivery[] = [];
const acks: Ack[] = [];
let lbUrl = "";
let owner: pg.Pool | null = null;
const root = path.resolve(import.meta.dirname, "../..");
const workDir = path.join(root, ".data", "live-scale-out");

beforeAll(async () => {
  if (!existsSync(HAPROXY))
    throw new Error(`${HAPROXY} is missing: \`npx tsx scripts/test-prerequisites.ts\` installs Debian's haproxy`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  database = await createEmptyPostgresDatabase();
  owner = new pg.Pool({ connectionString: database.url, max: 2 });
  const lbPort = livePort(25);
  lbUrl = `http://127.0.0.1:${lbPort}`;
  const sandboxWebhookSecret = secret();
  // One provider for every server: a refund sent twice, by any of them, is counted here.
  sandbox = await startSandbox({
    port: 0,
    host: "127.0.0.1",
    webhookUrl: `${lbUrl}/api/v1/events/sandbox`,
    webhookSecret: sandboxWebhookSecret,
  });
  subscriber = await startSubscriber(deliveries);
  const subscriberUrl = `http://127.0.0.1:${(subscriber.address() as AddressInfo).port}/outbox`;
  // What several machines share besides the database: the same secrets and the keyring (docs/scale-out.md).
  const shared: Record<string, string> = {
    DATABASE_URL: database.url,
    NEXTAUTH_URL: lbUrl,
    NEXTAUTH_SECRET: secret(),
    VERITY_OUTBOX_SECRET: secret(),
    VERITY_LOOKUP_SECRET: secret(),
    VERITY_SANDBOX_WEBHOOK_SECRET: sandboxWebhookSecret,
    VERITY_CHECKPOINT_KEYS: `scale-1=${secret()}`,
    VERITY_KEYRING_FILE: path.join(workDir, "keyring.json"),
    VERITY_START_SANDBOX: "false",
    VERITY_SANDBOX_URL: sandbox.url,
    VERITY_OUTBOX_WEBHOOK_URL: subscriberUrl,
    VERITY_MONITOR_INTERVAL_MS: String(MONITOR_INTERVAL_MS),
  };
  const start = (i: number) =>
    startVerityServer({
      label: `s${i + 1}`,
      port: livePort(20 + i),
      dataDir: path.join(workDir, `s${i + 1}`),
      env: shared,
    });
  // Three builds into one .next would corrupt it: on a stale build (not under `npm test`), the first starts alone.
  if (isConsoleBuildStale(root)) servers.push(await start(0));
  // At once, on one empty database: migrations, workflow and tool registration and the demo seed race.
  const started = await Promise.allSettled(
    Array.from({ length: SERVERS - servers.length }, (_, i) => start(servers.length + i)),
  );
  for (const s of started) if (s.status === "fulfilled") servers.push(s.value);
  for (const s of started) if (s.status === "rejected") throw s.reason;
  haproxy = await startHaproxy(lbPort, servers);
}, 600_000);

afterAll(async () => {
  haproxy?.kill("SIGTERM");
  await Promise.all(servers.map((s) => s.stop()));
  await sandbox?.close();
  await new Promise((resolve) => subscriber?.close(resolve) ?? resolve(undefined));
  await owner?.end();
  await database?.drop().catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
}, 120_000);

describe("three Verity servers behind HAProxy on one PostgreSQL", () => {
  it("started at once on one empty database: one migration history, one demo seed", async () => {
    const migrations = await query<{ name: string; n: string }>(
      "SELECT migration_name AS name, count(*) AS n FROM _prisma_migrations GROUP BY 1 HAVING count(*) > 1",
    );
    expect(migrations).toEqual([]);
    const users = await query<{ username: string; n: string }>(
      "SELECT username, count(*) AS n FROM users GROUP BY 1 HAVING count(*) > 1",
    );
    expect(users).toEqual([]);
    const [demo] = await query<{ n: string }>("SELECT count(*) AS n FROM users WHERE username = 'operator'");
    expect(Number(demo?.n)).toBe(1);
  });

  it("keeps every acknowledged write, refunds once and keeps the logs whole when a server is SIGKILLed mid-run", async () => {
    const person = await signInOverHttp(lbUrl, demoUsers[0]);
    // Before: the session works through every server.
    expect(await sessionServers(person, 9)).toEqual(new Set(servers.map((s) => s.label)));

    const victim = servers[1]!;
    const runId = `scale-${Date.now().toString(36)}`;
    let killedAt = 0;
    const expectedAcks = AGENTS * TASKS_PER_AGENT * 12;
    const killing = (async () => {
      // Mid-run: once about a third of the agents' writes are acknowledged, the victim's among them.
      while (acks.length < expectedAcks / 3 || !acks.some((a) => a.server === victim.label))
        await new Promise((r) => setTimeout(r, 50));
      killedAt = Date.now();
      await victim.kill();
    })();
    const agents = Array.from({ length: AGENTS }, (_, i) => agentFor(i));
    const reports: TaskReport[] = (
      await Promise.all(
        agents.map(async (agent, i) => {
          const out: TaskReport[] = [];
          for (let t = 1; t <= TASKS_PER_AGENT; t++)
            out.push(await agent.run(orderOf(`${runId}-a${i}-${t}`, 1000 + t, "usd")));
          return out;
        }),
      )
    ).flat();
    await killing;
    expect(killedAt).toBeGreaterThan(0);
    const beforeKill = acks.filter((a) => a.at < killedAt);
    expect(beforeKill.some((a) => a.server === victim.label)).toBe(true);
    expect(acks.some((a) => a.at > killedAt)).toBe(true);

    // After: the same cookie through the balancer, answered by the survivors.
    expect(await sessionServers(person, 6)).toEqual(new Set(servers.filter((s) => s !== victim).map((s) => s.label)));

    // The agents' own loop: a task left for the reconciler is resumed once it has settled.
    await settled();
    for (const agent of agents.slice(0, 1)) {
      for (const taskId of await agent.findResumable(runId)) reports.push(await agent.resume(taskId));
    }
    await settled();
    const finished = await query<{ status: string; n: string }>(
      "SELECT status, count(*) AS n FROM tasks WHERE id LIKE $1 GROUP BY 1",
      [`refund-${runId}-%`],
    );
    console.log(
      `scale-out: ${acks.length} acknowledged writes (${countBy(acks, (a) => a.server)}), kill at ack ${beforeKill.length}; tasks ${finished.map((r) => `${r.n} ${r.status}`).join(", ")}; outbox deliveries ${deliveries.length}`,
    );
    expect(reports.filter((r) => r.outcome === "error").map((r) => `${r.taskId}: ${r.detail}`)).toEqual([]);
    expect(finished.reduce((n, r) => n + Number(r.n), 0)).toBe(AGENTS * TASKS_PER_AGENT);

    // 1. Every acknowledged write is there.
    const missing = await missingAcknowledgedWrites(acks);
    expect(missing).toEqual([]);

    // 2. At most one refund per order at the provider, and each the ledger says succeeded is there once.
    const refunds = (await (await fetch(`${sandbox!.url}/v1/refunds`)).json()) as {
      data: Array<{ id: string; charge_id: string; idempotency_key: string }>;
    };
    const ours = refunds.data.filter((r) => r.charge_id.includes(runId));
    expect(ours.length).toBeGreaterThan(0);
    const perCharge = new Map<string, number>();
    for (const r of ours) perCharge.set(r.charge_id, (perCharge.get(r.charge_id) ?? 0) + 1);
    expect([...perCharge].filter(([, n]) => n > 1)).toEqual([]);
    const succeeded = await query<{ key: string }>(
      `SELECT idempotency_key AS key FROM executions WHERE tool = 'payments.refund' AND task_id LIKE $1
        AND status IN ('SUCCEEDED', 'RECONCILED_SUCCEEDED')`,
      [`refund-${runId}-%`],
    );
    const atProvider = new Set(ours.map((r) => r.idempotency_key));
    expect(succeeded.filter((e) => !atProvider.has(e.key))).toEqual([]);

    // 3. Every audit chain verifies, with the project's own command.
    const verified = await run(process.execPath, ["--import", "tsx", "scripts/audit-verify.ts"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: database!.url, VERITY_DATA_DIR: path.join(workDir, "s1") },
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout}${error.stderr}` }));
    expect(verified.stdout).toMatch(/audit log intact: [1-9]\d* entries/);

    // 4. No alert open twice for one problem; monitor passes of a tenant never overlap, and are not one per server.
    const duplicateAlerts = await query(
      `SELECT tenant_id, fingerprint, count(*) AS n FROM divergence_alerts
        WHERE fingerprint IS NOT NULL AND status <> 'RESOLVED' GROUP BY 1, 2 HAVING count(*) > 1`,
    );
    expect(duplicateAlerts).toEqual([]);
    const runs = await query<{ tenant_id: string; started_at: Date; finished_at: Date | null }>(
      "SELECT tenant_id, started_at, finished_at FROM invariant_monitor_runs ORDER BY tenant_id, started_at",
    );
    expect(runs.length).toBeGreaterThan(0);
    const overlapping = runs.filter((r, i) => {
      const next = runs[i + 1];
      return next && next.tenant_id === r.tenant_id && (r.finished_at === null || next.started_at < r.finished_at);
    });
    expect(overlapping).toEqual([]);
    // One pass per interval across the three servers, not one per server: each starts an interval after the last.
    const crowded = runs.filter((r, i) => {
      const next = runs[i + 1];
      return next && next.tenant_id === r.tenant_id && +next.started_at - +r.started_at < MONITOR_INTERVAL_MS;
    });
    expect(crowded).toEqual([]);

    // 5. The outbox: every message delivered at least once and marked delivered; none delivered after that.
    const outbox = await query<{ id: string; delivered_at: Date | null; attempts: number }>(
      "SELECT id, delivered_at, attempts FROM outbox_messages",
    );
    expect(outbox.length).toBeGreaterThan(0);
    expect(outbox.filter((m) => m.delivered_at === null).map((m) => m.id)).toEqual([]);
    const byId = new Map<string, Delivery[]>();
    for (const d of deliveries) byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
    expect(outbox.filter((m) => !byId.has(m.id)).map((m) => m.id)).toEqual([]);
    const redelivered = outbox.filter((m) =>
      (byId.get(m.id) ?? []).some((d) => d.at > m.delivered_at!.getTime() + 1_000),
    );
    expect(redelivered.map((m) => m.id)).toEqual([]);
    // Each delivery the subscriber saw was one claimed attempt: acknowledged once, never re-claimed after it.
    expect(outbox.filter((m) => (byId.get(m.id)?.length ?? 0) > m.attempts).map((m) => m.id)).toEqual([]);
  }, 300_000);
});

// ── the fleet ─────────────────────────────────────────────────────────────

async function startHaproxy(port: number, backends: VerityServer[]): Promise<ChildProcess> {
  const config = path.join(workDir, "haproxy.cfg");
  writeFileSync(
    config,
    haproxyConfig({ port, backends: backends.map((s) => ({ name: s.label, address: new URL(s.baseUrl).host })) }),
  );
  await run(HAPROXY, ["-c", "-q", "-f", config]);
  const child = spawn(HAPROXY, ["-db", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr?.on("data", (c: Buffer) => (errors = (errors + c.toString()).slice(-4000)));
  // Up once every backend has answered through it.
  const seen = new Set<string>();
  const deadline = Date.now() + 60_000;
  while (seen.size < backends.length) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${errors}`);
    if (Date.now() > deadline) throw new Error(`haproxy reached only ${[...seen].join(", ")}: ${errors}`);
    const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null);
    const by = res?.ok ? res.headers.get("x-served-by") : null;
    if (by) seen.add(by);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

/** The outbox's subscriber: records each delivery (message id, attempt, when) and answers 200. */
function startSubscriber(into: Delivery[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const message = JSON.parse(body) as { id: string; attempt: number };
      into.push({ id: message.id, attempt: message.attempt, at: Date.now() });
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function agentFor(index: number): RefundAgent {
  const client = new VerityClient({
    baseUrl: lbUrl,
    token: demoAgent.token,
    fetch: recordingFetch(),
    retries: 5,
  });
  return new RefundAgent({
    client,
    sandboxUrl: sandbox!.url,
    identity: demoAgent.identity,
    callTimeoutMs: 2_000,
    leaseTtlSeconds: 10,
    leaseWaitMs: 15_000,
    // Outcomes the provider leaves unknown: the servers' reconcilers settle them, and the outbox announces it.
    faults: ["drop_response", "error_after_commit"],
    faultRate: 0.3,
    seed: 16 + index,
    log: () => undefined,
  });
}

/** fetch that keeps every acknowledged write (a 2xx answer to a POST) with the server that gave it. */
function recordingFetch(): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if ((init?.method ?? "GET") === "POST" && res.ok) {
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as Record<string, unknown>;
      acks.push({
        path: new URL(String(input)).pathname,
        server: res.headers.get("x-served-by") ?? "?",
        body,
        at: Date.now(),
      });
    }
    return res;
  };
}

// ── the checks ────────────────────────────────────────────────────────────

async function query<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  return (await owner!.query(text, params)).rows as T[];
}

/** Until no execution waits for an outcome and no outbox message for delivery (at most two minutes). */
async function settled(): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [open] = await query<{ executions: string; outbox: string }>(
      `SELECT (SELECT count(*) FROM executions WHERE status IN ('INTENT_RECORDED', 'SENT', 'OUTCOME_UNKNOWN')) AS executions,
              (SELECT count(*) FROM outbox_messages WHERE delivered_at IS NULL) AS outbox`,
    );
    if (Number(open?.executions) === 0 && Number(open?.outbox) === 0) return;
    if (Date.now() > deadline)
      throw new Error(`not settled in two minutes: ${open?.executions} executions open, ${open?.outbox} messages`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Each acknowledged write looked up where it was written: the rows its answer named. */
async function missingAcknowledgedWrites(all: Ack[]): Promise<string[]> {
  const missing: string[] = [];
  const want = { tasks: new Set<string>(), transitions: new Set<string>(), executions: new Set<string>() };
  const versions = new Map<string, number>();
  for (const a of all) {
    const body = a.body as {
      id?: string;
      version?: number;
      task?: { id: string; version: number };
      transition?: { id: string };
      execution?: { id: string };
    };
    if (a.path === "/api/v1/tasks" && body.id) want.tasks.add(body.id);
    if (body.task?.id) versions.set(body.task.id, Math.max(versions.get(body.task.id) ?? 0, body.task.version));
    if (body.transition?.id) want.transitions.add(body.transition.id);
    if (body.execution?.id) want.executions.add(body.execution.id);
    if (/^\/api\/v1\/executions\/[^/]+\/(sent|outcome)$/.test(a.path)) want.executions.add(a.path.split("/")[4]!);
  }
  expect(want.tasks.size).toBe(AGENTS * TASKS_PER_AGENT);
  expect(want.transitions.size).toBeGreaterThan(0);
  expect(want.executions.size).toBeGreaterThan(0);
  for (const [table, ids] of Object.entries(want)) {
    const found = new Set(
      (await query<{ id: string }>(`SELECT id FROM ${table} WHERE id = ANY($1)`, [[...ids]])).map((r) => r.id),
    );
    for (const id of ids) if (!found.has(id)) missing.push(`${table} ${id}`);
  }
  const stored = await query<{ id: string; version: number }>("SELECT id, version FROM tasks WHERE id = ANY($1)", [
    [...versions.keys()],
  ]);
  for (const t of stored)
    if (t.version < versions.get(t.id)!) missing.push(`task ${t.id} at version ${t.version} < ${versions.get(t.id)}`);
  return missing;
}

/**
 * The servers that honoured the session in `n` requests through the
 * balancer: next-auth's session (the console session row checked) and a
 * console page rendered for the person, not a redirect to the sign-in.
 */
async function sessionServers(cookie: string, n: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const session = await fetch(`${lbUrl}/api/auth/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as { userId?: string }).userId).toBeTruthy();
    seen.add(session.headers.get("x-served-by") ?? "?");
    const page = await fetch(`${lbUrl}/tasks`, { headers: { cookie }, redirect: "manual" });
    expect(page.status).toBe(200);
    await page.arrayBuffer();
    seen.add(page.headers.get("x-served-by") ?? "?");
  }
  return seen;
}

function countBy<T>(items: T[], key: (item: T) => string): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts]
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
}
