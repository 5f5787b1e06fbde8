/**
 * Live updates pushed (docs/live-updates.md): what the console's change
 * stream costs and how soon it delivers, next to the polling it replaces,
 * in the same run against one production server on PostgreSQL.
 *
 *   npm run bench:live
 *   BENCH_LIVE_CLIENTS=50 BENCH_LIVE_CHANGES=60 BENCH_LIVE_WINDOW_S=30 npm run bench:live
 *
 * The server is `npm start`'s own script (scripts/start.ts: migrate, seed the
 * demo, build when stale, serve) on a fresh PostgreSQL database, as
 * tests/live/servers.ts starts it. Then:
 *
 * 1. Latency: `clients` Server-Sent Events streams (one person's session,
 *    as many open tabs) on /api/console/events; `changes` transitions
 *    through the agent API, one at a time. For each change and each client,
 *    the time from sending the request to that client's `change` event for
 *    the task's new version (so it includes the API's own work and commit).
 * 2. The database's work while nothing changes, over a fixed window each,
 *    alternating: no client; `clients` idle streams; `clients` pollers
 *    asking a task page's version route every 3 s, as LiveRefresh did
 *    before the stream. The clients are opened before the window starts.
 *    Measured as pg_stat_database's committed and rolled-back transactions
 *    of the server's database over the window, less the no-client window
 *    (the background loops: reconciler, monitor).
 */
import os from "node:os";
import pg from "pg";
import { demoAgent, demoUsers } from "@/lib/config/demo-accounts";
import { createEmptyPostgresDatabase } from "@/tests/helpers/postgres";
import { signInOverHttp } from "@/tests/helpers/http-sign-in";
import { startVerityServer } from "@/tests/live/servers";

const clients = Number(process.env.BENCH_LIVE_CLIENTS ?? 50);
const changes = Number(process.env.BENCH_LIVE_CHANGES ?? 60);
const windowS = Number(process.env.BENCH_LIVE_WINDOW_S ?? 30);
const pollMs = 3_000;
const port = Number(process.env.BENCH_LIVE_PORT ?? 3930);
const baseUrl = `http://127.0.0.1:${port}`;
const agentAuth = { authorization: `Bearer ${demoAgent.token}`, "content-type": "application/json" };

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ── HTTP as the person and the agent ────────────────────────────────────

async function api(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: agentAuth,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A task's version in an answer of the API (a task, or a transition's `{ task, transition }`). */
function versionIn(body: Record<string, unknown>): number {
  return ((body.task ?? body) as { version: number }).version;
}

async function runningTask(): Promise<{ id: string; version: number }> {
  const id = `bench-live-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
  let version = versionIn(await api("/api/v1/tasks", { workflow: "agent-task", task_id: id, intent_id: id }));
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = versionIn(await api(`/api/v1/tasks/${id}/transitions`, { expected_version: version, to }));
  return { id, version };
}

// ── the streams ──────────────────────────────────────────────────────────

interface Stream {
  live: Promise<void>;
  /** Resolves when this stream sees the change of `id` to `version`. */
  waitFor(id: string, version: number): Promise<number>;
  close(): void;
}

function openStream(cookie: string): Stream {
  const controller = new AbortController();
  const waiting = new Map<string, (at: number) => void>();
  const seen = new Map<string, number>();
  let onLive!: () => void;
  const live = new Promise<void>((resolve) => (onLive = resolve));
  void (async () => {
    const res = await fetch(`${baseUrl}/api/console/events`, { headers: { cookie }, signal: controller.signal });
    if (!res.ok || !res.body) throw new Error(`the stream was refused: ${res.status}`);
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const at = performance.now();
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!event || !data) continue;
        const body = JSON.parse(data) as { live?: boolean; kind?: string; id?: string; version?: number };
        if (event === "status" && body.live) onLive();
        if (event === "change" && body.kind === "task") {
          const key = `${body.id}@${body.version}`;
          seen.set(key, at);
          waiting.get(key)?.(at);
        }
      }
    }
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) console.error("a stream failed:", error);
  });
  return {
    live,
    waitFor: (id, version) => {
      const key = `${id}@${version}`;
      const already = seen.get(key);
      if (already !== undefined) return Promise.resolve(already);
      return new Promise((resolve) => waiting.set(key, resolve));
    },
    close: () => controller.abort(),
  };
}

// ── the database's side ─────────────────────────────────────────────────

async function transactions(owner: pg.Client, database: string): Promise<number> {
  const { rows } = await owner.query<{ n: string }>(
    "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1",
    [database],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * The database's transactions over one window of steady state: `start` opens
 * the clients (their sign-in and first reads fall before the window) and
 * returns how to stop them. Backends report their counts about once a second
 * while busy, so both ends are read while the clients run.
 */
async function overWindow(owner: pg.Client, database: string, start: () => Promise<() => Promise<void>>) {
  const stop = await start();
  await sleep(2_000);
  const before = await transactions(owner, database);
  await sleep(windowS * 1000);
  const after = await transactions(owner, database);
  await stop();
  return after - before;
}

async function main() {
  const started = performance.now();
  const database = await createEmptyPostgresDatabase();
  const name = new URL(database.url).pathname.slice(1);
  console.log(`# bench:live  ${new Date().toISOString()}`);
  console.log(
    `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  console.log(
    `# ${clients} clients, ${changes} changes, ${windowS} s windows; load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  // npm start's own script on the production build (tests/live/servers.ts), the
  // background loop at its default pace so the idle window measures what a deployment sees.
  const server = await startVerityServer({
    label: "bench:live",
    port,
    dataDir: ".data/bench-live",
    env: { DATABASE_URL: database.url, SANDBOX_PORT: String(port + 1), VERITY_RECONCILE_INTERVAL_MS: "5000" },
  });
  const owner = new pg.Client({ connectionString: database.url });
  await owner.connect();
  const streams: Stream[] = [];
  try {
    const operator = demoUsers.find((a) => a.username === "operator")!;
    const cookie = await signInOverHttp(baseUrl, operator);
    const task = await runningTask();

    // 1. Latency, change to event, at every client.
    for (let i = 0; i < clients; i++) streams.push(openStream(cookie));
    await Promise.all(streams.map((s) => s.live));
    const latencies: number[] = [];
    const apiMs: number[] = [];
    let version = task.version;
    for (let i = 0; i < changes; i++) {
      const sent = performance.now();
      version = versionIn(
        await api(`/api/v1/tasks/${task.id}/transitions`, {
          expected_version: version,
          patch: { budget: { hops_used: i + 1 } },
        }),
      );
      apiMs.push(performance.now() - sent);
      const arrivals = await Promise.all(streams.map((s) => s.waitFor(task.id, version)));
      for (const at of arrivals) latencies.push(at - sent);
    }
    latencies.sort((a, b) => a - b);
    apiMs.sort((a, b) => a - b);

    // 2. The database's work with nobody, idle streams, and pollers.
    for (const s of streams.splice(0)) s.close();
    const versionUrl = `${baseUrl}/api/console/tasks/${task.id}/version`;
    const idle = { none: [] as number[], streams: [] as number[], polling: [] as number[] };
    for (let round = 0; round < 2; round++) {
      idle.none.push(await overWindow(owner, name, async () => async () => undefined));
      idle.streams.push(
        await overWindow(owner, name, async () => {
          const open = Array.from({ length: clients }, () => openStream(cookie));
          await Promise.all(open.map((s) => s.live));
          return async () => {
            for (const s of open) s.close();
          };
        }),
      );
      idle.polling.push(
        await overWindow(owner, name, async () => {
          const stop = new AbortController();
          // Each poller starts at its own moment within the first interval, as pages opened over time do.
          const pollers = Promise.all(
            Array.from({ length: clients }, async (_, i) => {
              await sleep((pollMs * i) / clients);
              while (!stop.signal.aborted) {
                const asked = performance.now();
                const res = await fetch(versionUrl, { headers: { cookie } });
                await res.arrayBuffer();
                await sleep(Math.max(0, pollMs - (performance.now() - asked)));
              }
            }),
          );
          await sleep(pollMs);
          return async () => {
            stop.abort();
            await pollers;
          };
        }),
      );
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const none = mean(idle.none);
    const streamsTx = mean(idle.streams) - none;
    const pollingTx = mean(idle.polling) - none;

    console.log(
      "\n| clients | changes | event p50 ms | event p99 ms | event max ms | API response p50 ms | idle streams tx/s | 3 s pollers tx/s | streams / polling | background tx/s |",
    );
    console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    console.log(
      `| ${clients} | ${changes} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${latencies.at(-1)!.toFixed(1)} | ${percentile(apiMs, 50).toFixed(1)} | ${(streamsTx / windowS).toFixed(2)} | ${(pollingTx / windowS).toFixed(2)} | ${((streamsTx / pollingTx) * 100).toFixed(1)}% | ${(none / windowS).toFixed(2)} |`,
    );
    console.log(
      `\n# windows (transactions): none ${idle.none.join(", ")}; streams ${idle.streams.join(", ")}; polling ${idle.polling.join(", ")}`,
    );
  } finally {
    for (const s of streams) s.close();
    await owner.end();
    await server.stop();
    await database.drop();
  }
  console.log(
    `# total ${((performance.now() - started) / 1000).toFixed(1)} s, load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
