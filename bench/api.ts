/**
 * The agent API next to the engine it fronts: transitions and tool-call
 * cycles per second over real HTTP against a running production server, and
 * the same operations in-process (the lib/use-cases functions) on the same
 * PostgreSQL database, in the same run.
 *
 *   npm run bench:api                      # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_API_OPS=2000 BENCH_CONCURRENCY=16,64 npm run bench:api
 *   BENCH_API_OPERATIONS=transition npm run bench:api         # or "tool call"
 *   BENCH_API_CPU_PROF=.data/bench-api-prof npm run bench:api   # the server's CPU profiles (node --cpu-prof)
 *   BENCH_API_SERVER_ENV='{"VERITY_DB_POOL_SIZE":"4"}' npm run bench:api   # the server's settings on top
 *
 * The server is `npm start`'s own script (scripts/start.ts: migrate, seed the
 * demo, build when stale, serve with scripts/serve.mjs) on a fresh PostgreSQL database,
 * as tests/live/servers.ts starts it, background loop at its default pace.
 * The API side is a closed-loop client on node:http with keep-alive (one
 * socket per client, no pipelining): each of `concurrency` clients sends its
 * next request when the last one was answered, as the demo agent (its token,
 * If-Match), each on its own task, so this measures the cost of a request,
 * not contention. The in-process side calls the same use cases as the same
 * agent on tasks of its own, with a pool as large as the server's
 * (VERITY_DB_POOL_SIZE, 10 by default): the database's own limit on
 * connections (100 here, shared by everyone's tests) cannot give each side
 * 64, and the same pool on both sides compares what the API adds, not two
 * pool sizes.
 *
 * Two operations:
 * - transition: an in-place patch (budget.hops_used + 1) under If-Match;
 *   API `POST /api/v1/tasks/{id}/transitions`, in-process transitionTask.
 * - tool call: the intent sent with itself, then the outcome, of a
 *   crm.add_note (reversible: its success stands on the evidence naming the
 *   execution; no provider call, on either side), as the SDK's executeTool
 *   makes it since 2026-12-04; API `POST /tasks/{id}/executions` with
 *   `send: true`, `/executions/{id}/outcome`, in-process recordIntent with
 *   `send`, recordOutcome. Counted per cycle (two writes; three, with a
 *   separate `/sent`, before).
 *
 * API and in-process alternate in short rounds (A E, E A, …) so that load
 * from other work on a shared machine falls on both alike. The server's CPU
 * (its whole process group, from /proc) is sampled over the API's rounds.
 */
import http from "node:http";
import os from "node:os";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { demoAgent } from "@/lib/config/demo-accounts";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { analyzeDatabase, createEmptyPostgresDatabase } from "@/tests/helpers/postgres";
import { startVerityServer } from "@/tests/live/servers";
import { cpuSecondsWhere } from "./process-cpu";

const port = Number(process.env.BENCH_API_PORT ?? 3940);
// One folder per port: two runs side by side must not empty each other's keyring.
const dataDir = `.data/bench-api-${port}`;
// As `npm start` runs it (outside production Prisma records a call site on
// every query), and reading the server's keyring: both sides seal and open
// the same database's values (an execution's request is sealed).
Object.assign(process.env, {
  NODE_ENV: process.env.NODE_ENV ?? "production",
  VERITY_DATA_DIR: dataDir,
  VERITY_KEYRING_FILE: `${dataDir}/keys/keyring.json`,
});

const levels = (process.env.BENCH_CONCURRENCY ?? "1,4,16,64").split(",").map(Number);
const perLevel = Number(process.env.BENCH_API_OPS ?? 1200);
const rounds = 4;
const cpuProfDir = process.env.BENCH_API_CPU_PROF;
const serverEnv = JSON.parse(process.env.BENCH_API_SERVER_ENV ?? "{}") as Record<string, string>;
const poolSize = Number(serverEnv.VERITY_DB_POOL_SIZE ?? 10);
const operationsRun = (process.env.BENCH_API_OPERATIONS ?? "transition,tool call").split(",");
const agent: Actor = { identity: demoAgent.identity, kind: "agent" };

// ── a closed-loop HTTP client ───────────────────────────────────────────

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Math.max(...levels) });

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent: keepAlive,
        headers: {
          authorization: `Bearer ${demoAgent.token}`,
          "content-type": "application/json",
          "content-length": payload.byteLength,
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          const status = res.statusCode ?? 0;
          if (status >= 300) reject(new Error(`POST ${path}: ${status} ${text.slice(0, 500)}`));
          else resolve({ status, body: JSON.parse(text) as Record<string, unknown> });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The task's version in an answer: a task itself, or `{ task, … }`. */
const versionOf = (answer: Answer) => ((answer.body.task ?? answer.body) as { version: number }).version;

// ── measuring ───────────────────────────────────────────────────────────

interface Sample {
  count: number;
  seconds: number;
  latencies: number[];
  /** CPU seconds over the sample: the server's process group for the API, this process for in-process. */
  cpu: number;
}

const emptySample = (): Sample => ({ count: 0, seconds: 0, latencies: [], cpu: 0 });

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** user + system CPU seconds of every process in the group (start.ts, next-server, the sandbox inside start.ts). */
function groupCpuSeconds(pgid: number): number {
  return cpuSecondsWhere((p) => p.pgrp === pgid);
}

async function drive(
  workers: number,
  total: number,
  op: (worker: number) => Promise<void>,
  serverPgid?: number,
): Promise<Sample> {
  const latencies: number[] = [];
  const each = Math.ceil(total / workers);
  const cpuBefore = serverPgid ? groupCpuSeconds(serverPgid) : 0;
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  // One worker's failure stops the others after their current operation, not at the end of their loops.
  let failed = false;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < each && !failed; i++) {
        const t0 = performance.now();
        try {
          await op(w);
        } catch (error) {
          failed = true;
          throw error;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  const cpu = serverPgid ? groupCpuSeconds(serverPgid) - cpuBefore : (own.user + own.system) / 1e6;
  return { count: each * workers, seconds, latencies, cpu };
}

function merge(into: Sample, s: Sample): void {
  into.count += s.count;
  into.seconds += s.seconds;
  into.latencies.push(...s.latencies);
  into.cpu += s.cpu;
}

/** The server's CPU per second with no request (its background loop), measured before the levels. */
let idleCpuPerSecond = 0;

function summary(s: Sample, server = false) {
  const sorted = [...s.latencies].sort((a, b) => a - b);
  return {
    perSecond: s.count / s.seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    cpuMs: (s.cpu * 1000) / s.count,
    /** Less what the server spends idle over the same time: what the requests themselves cost. */
    requestCpuMs: server ? ((s.cpu - idleCpuPerSecond * s.seconds) * 1000) / s.count : Number.NaN,
  };
}

// ── the two operations, both ways ───────────────────────────────────────

interface BenchTask {
  id: string;
  version: number;
  hops: number;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${(++counter).toString(36)}`;

/** A RUNNING agent-task created through the API, so the demo agent owns it on both sides. */
async function runningTask(): Promise<BenchTask> {
  const id = unique("bench-api");
  let version = versionOf(await post("/api/v1/tasks", { workflow: "agent-task", task_id: id, intent_id: id }));
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = versionOf(await post(`/api/v1/tasks/${id}/transitions`, { to }, { "if-match": `"${version}"` }));
  return { id, version, hops: 0 };
}

function apiTransition(tasks: BenchTask[]) {
  return async (w: number) => {
    const task = tasks[w]!;
    const answer = await post(
      `/api/v1/tasks/${task.id}/transitions`,
      { patch: { budget: { hops_used: task.hops + 1 } } },
      { "if-match": `"${task.version}"` },
    );
    task.version = versionOf(answer);
    task.hops++;
  };
}

function engineTransition(handle: DatabaseHandle, tasks: BenchTask[]) {
  return async (w: number) => {
    const task = tasks[w]!;
    const result = await transitionTask(
      handle.db,
      task.id,
      { expected_version: task.version, patch: { budget: { hops_used: task.hops + 1 } } },
      agent,
    );
    task.version = result.task.version;
    task.hops++;
  };
}

const noteRequest = (n: string) => ({ customer_id: "cus_bench", text: `bench note ${n}` });

function apiToolCall(tasks: BenchTask[]) {
  return async (w: number) => {
    const task = tasks[w]!;
    const call = unique("note");
    const intent = await post(
      `/api/v1/tasks/${task.id}/executions`,
      { tool_call_id: call, tool: "crm.add_note", request: noteRequest(call), send: true },
      { "if-match": `"${task.version}"` },
    );
    if (intent.body.kind !== "proceed") throw new Error(`intent answered ${String(intent.body.kind)}`);
    const execution = intent.body.execution as { id: string; attempt_id: string };
    const outcome = await post(`/api/v1/executions/${execution.id}/outcome`, {
      attempt_id: execution.attempt_id,
      outcome: "succeeded",
      result: { note_id: `note_${call}` },
      evidence: { execution_id: execution.id },
    });
    task.version = versionOf(outcome);
  };
}

function engineToolCall(handle: DatabaseHandle, tasks: BenchTask[]) {
  return async (w: number) => {
    const task = tasks[w]!;
    const call = unique("note");
    const intent = await recordIntent(
      handle.db,
      task.id,
      {
        tool_call_id: call,
        tool: "crm.add_note",
        request: noteRequest(call),
        expected_version: task.version,
        send: true,
      },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error(`intent answered ${intent.kind}`);
    const { execution } = intent;
    const outcome = await recordOutcome(
      handle.db,
      execution.id,
      {
        attempt_id: execution.attemptId,
        outcome: "succeeded",
        result: { note_id: `note_${call}` },
        evidence: { execution_id: execution.id },
      },
      agent,
    );
    task.version = outcome.task!.version;
  };
}

/**
 * Node 20 refuses --cpu-prof in NODE_OPTIONS, and the server is scripts/serve.mjs
 * under start.ts: a preload that profiles each Node process of the group
 * from its start and writes `<pid>.cpuprofile` (open it in Chrome's DevTools
 * or speedscope) when it exits. The inspector's session answers
 * synchronously on the main thread, so the exit handler can still collect it.
 */
function profilerPreload(dir: string): string {
  const absolute = path.resolve(dir);
  mkdirSync(absolute, { recursive: true });
  const file = path.join(absolute, "preload.cjs");
  writeFileSync(
    file,
    `const inspector = require("node:inspector");
const fs = require("node:fs");
const session = new inspector.Session();
session.connect();
session.post("Profiler.enable");
session.post("Profiler.setSamplingInterval", { interval: 500 });
session.post("Profiler.start");
process.on("exit", () => {
  session.post("Profiler.stop", (error, result) => {
    if (!error) fs.writeFileSync(${JSON.stringify(absolute)} + "/" + process.pid + ".cpuprofile", JSON.stringify(result.profile));
  });
});
`,
  );
  return file;
}

// ── the run ─────────────────────────────────────────────────────────────

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

interface Row {
  operation: "transition" | "tool call";
  concurrency: number;
  api: Sample;
  engine: Sample;
}

async function main() {
  const started = performance.now();
  const database = await createEmptyPostgresDatabase();
  console.log(`# bench:api  ${new Date().toISOString()}`);
  console.log(
    `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  console.log(
    `# ${perLevel} operations per side per level in ${rounds} alternating rounds; pools of ${poolSize} on both sides; server env ${JSON.stringify(serverEnv)}${cpuProfDir ? `; CPU profiles in ${cpuProfDir}` : ""}`,
  );
  console.log(`# load average at start: ${load()}; database ${new URL(database.url).pathname.slice(1)}\n`);
  const server = await startVerityServer({
    label: "bench:api",
    port,
    dataDir,
    env: {
      DATABASE_URL: database.url,
      SANDBOX_PORT: String(port + 1),
      // The loop at its default pace, as a deployment runs it (servers.ts sets 1 s for the suites).
      VERITY_RECONCILE_INTERVAL_MS: "5000",
      ...(cpuProfDir ? { NODE_OPTIONS: `--require ${profilerPreload(cpuProfDir)}` } : {}),
      ...serverEnv,
    },
  });
  const rows: Row[] = [];
  // Ctrl-C: the server is a process group of its own and the database outlives us; end both.
  process.once("SIGINT", () => {
    void server
      .stop()
      .then(() => database.drop())
      .finally(() => process.exit(130));
  });
  try {
    // The server's CPU with no request at all (its background loop, the sandbox): counted in
    // the API's server CPU per request below, and shown apart so that it can be told apart.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idleFrom = groupCpuSeconds(server.pid);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    idleCpuPerSecond = (groupCpuSeconds(server.pid) - idleFrom) / 10;
    console.log(`# the server idle: ${(idleCpuPerSecond * 1000).toFixed(0)} ms CPU per second\n`);
    for (const concurrency of levels) {
      const handle = openDatabase({ kind: "postgres", url: database.url }, { poolSize });
      try {
        const apiTasks: BenchTask[] = [];
        const engineTasks: BenchTask[] = [];
        for (let i = 0; i < concurrency; i++) {
          apiTasks.push(await runningTask());
          engineTasks.push(await runningTask());
        }
        const operations = [
          {
            operation: "transition" as const,
            api: apiTransition(apiTasks),
            engine: engineTransition(handle, engineTasks),
          },
          { operation: "tool call" as const, api: apiToolCall(apiTasks), engine: engineToolCall(handle, engineTasks) },
        ];
        for (const { operation, api, engine } of operations.filter((o) => operationsRun.includes(o.operation))) {
          // A cycle is two writes: half as many keeps each side's time alike.
          const total = operation === "transition" ? perLevel : Math.ceil(perLevel / 2);
          const warmup = Math.max(30, 2 * concurrency);
          const a = emptySample();
          const e = emptySample();
          try {
            await drive(concurrency, warmup, api);
            await drive(concurrency, warmup, engine);
            const slice = Math.ceil(total / rounds);
            for (let round = 0; round < rounds; round++) {
              // Statistics as autovacuum keeps them on a database that has run a while (analyzeDatabase).
              await analyzeDatabase(database.url);
              const apiRound = async () => merge(a, await drive(concurrency, slice, api, server.pid));
              const engineRound = async () => merge(e, await drive(concurrency, slice, engine));
              if (round % 2 === 0) {
                await apiRound();
                await engineRound();
              } else {
                await engineRound();
                await apiRound();
              }
            }
          } catch (error) {
            // Said and skipped, so that the levels after it still run and the table is printed.
            console.log(
              `${operation} at ${concurrency}: FAILED: ${error instanceof Error ? error.message.split("\n").filter(Boolean).join(" ") : String(error)}`,
            );
            continue;
          }
          rows.push({ operation, concurrency, api: a, engine: e });
          const as = summary(a, true);
          const es = summary(e);
          console.log(
            `${operation} at ${concurrency}: API ${as.perSecond.toFixed(0)}/s (p50 ${as.p50.toFixed(1)} ms, p99 ${as.p99.toFixed(1)} ms, server CPU ${as.cpuMs.toFixed(2)} ms each, ${as.requestCpuMs.toFixed(2)} beyond idle), in-process ${es.perSecond.toFixed(0)}/s (p50 ${es.p50.toFixed(1)} ms, p99 ${es.p99.toFixed(1)} ms, CPU ${es.cpuMs.toFixed(2)} ms each): ${((as.perSecond / es.perSecond) * 100).toFixed(0)}%  [load ${load()}]`,
          );
        }
      } finally {
        await handle.close();
      }
    }
  } finally {
    await server.stop();
    keepAlive.destroy();
    await database.drop().catch((error: unknown) => console.error("could not drop the database:", error));
  }

  console.log(
    "\n| operation | concurrency | API /s | API p50 ms | API p99 ms | server CPU ms/op (beyond idle) | in-process /s | in-process p50 ms | in-process p99 ms | in-process CPU ms/op | API / in-process |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  let belowGoal = false;
  for (const row of rows) {
    const a = summary(row.api, true);
    const e = summary(row.engine);
    const ratio = a.perSecond / e.perSecond;
    if (row.concurrency >= 16 && ratio < 0.5) belowGoal = true;
    console.log(
      `| ${row.operation} | ${row.concurrency} | ${a.perSecond.toFixed(0)} | ${a.p50.toFixed(2)} | ${a.p99.toFixed(2)} | ${a.cpuMs.toFixed(2)} (${a.requestCpuMs.toFixed(2)}) | ${e.perSecond.toFixed(0)} | ${e.p50.toFixed(2)} | ${e.p99.toFixed(2)} | ${e.cpuMs.toFixed(2)} | ${(ratio * 100).toFixed(0)}% |`,
    );
  }
  console.log(
    `\n# a tool call is one cycle of two requests (the intent sent with itself, the outcome); total ${((performance.now() - started) / 1000).toFixed(1)} s, load average at end: ${load()}` +
      (belowGoal ? "; BELOW the 50% goal at concurrency 16 or more" : ""),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
