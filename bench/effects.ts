/**
 * The cost of durability for side effects: refunds per second through the
 * execution ledger (the intent sent with itself → call → the provider's
 * confirmation of the irreversible success → outcome: two commits on
 * PostgreSQL, recordIntent's `send`), the same refund made by Verity itself
 * through its connector (performToolCall: no confirmation lookup, the
 * provider answered Verity's own request), next to the same refund calls made directly to the sandbox
 * provider, and next to a DBOS Transact workflow of one step making the same
 * call (bench/effects-dbos.ts: its own process, its own system database on
 * the same PostgreSQL), all in the same run, with no faults. The provider,
 * the sandbox, runs in a process of its own (bench/effects-sandbox.ts).
 *
 *   npm run bench:effects                   # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_EFFECTS=600 BENCH_CONCURRENCY=1,8 npm run bench:effects
 *   BENCH_EFFECTS_DBOS=off npm run bench:effects   # ledger and direct only (bench:encryption)
 *   BENCH_EFFECTS_LIVE=off npm run bench:effects   # the database's live announcements off
 *
 * Each worker drives its own task (RUNNING → WAITING_FOR_TOOL → RUNNING per
 * refund, a new tool call id each time), so this measures the ledger's
 * writes, not contention. The three sides alternate in rounds (ledger,
 * direct, DBOS; then DBOS, direct, ledger; …) so drift on a shared machine
 * favours none. Each side has a pool of the highest concurrency + 2
 * connections.
 */
import { fork } from "node:child_process";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { performEffect } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { performToolCall } from "@/lib/use-cases/executions/perform-tool-call";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { startSandbox } from "@/programs/sandbox/server";
import { applyLiveUpdatesSetting } from "@/lib/db/notifications";
import { cpuSecondsWhere, processCpuSeconds } from "./process-cpu";
import { analyzeDatabase, createEmptyPostgresDatabase, createPostgresTestDatabase } from "@/tests/helpers/postgres";

Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const levels = (process.env.BENCH_CONCURRENCY ?? "1,8,32").split(",").map(Number);
const perLevel = Number(process.env.BENCH_EFFECTS ?? 800);
const rounds = 4;
const agent: Actor = { identity: "spiffe://verity.bench/agent/refunds", kind: "agent" };
const request = { amount_cents: 1000, currency: "usd", charge_id: "ch_bench", customer_id: "cus_bench" };

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;
}

interface Sample {
  count: number;
  seconds: number;
  latencies: number[];
}

/** A side's samples summed over its rounds, with the CPU they took and the WAL they wrote. */
type Side = Sample & { cpu: CpuSpent; walBytes: number };

/** Where a side's CPU went, in seconds: its own process, the provider's, the database server's (every postgres process). */
interface CpuSpent {
  client: number;
  provider: number;
  database: number;
}

/** The CPU spent by `run`'s side: the client is this process, or the pid of the process that does the side's work (DBOS). */
async function measured(
  run: () => Promise<Sample>,
  clientPid: number,
  providerPid: number | null,
): Promise<Sample & { cpu: CpuSpent; walBytes: number }> {
  const at = () => ({
    client: processCpuSeconds(clientPid),
    provider: providerPid === null ? 0 : processCpuSeconds(providerPid),
    // Every PostgreSQL server process on this machine: the server the bench uses is local.
    database: cpuSecondsWhere((p) => p.command === "postgres"),
  });
  const walBefore = await walPosition();
  const before = at();
  const sample = await run();
  const after = at();
  const walBytes = (await walPosition()) - walBefore;
  return {
    ...sample,
    walBytes,
    cpu: {
      client: after.client - before.client,
      provider: after.provider - before.provider,
      database: after.database - before.database,
    },
  };
}

async function drive(workers: number, total: number, op: (worker: number) => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  const each = Math.ceil(total / workers);
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < each; i++) {
        const t = performance.now();
        await op(w);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { count: each * workers, seconds: (performance.now() - start) / 1000, latencies };
}

/**
 * A program of bench/ in a process of its own (through tsx, NODE_ENV
 * production), spoken to over IPC: `next` is its next message, `stop` asks
 * it to end ({ stop: true }) and waits until it has.
 */
function forkChild<Reply>(file: string, args: string[], name: string) {
  const child = fork(path.join(import.meta.dirname, file), args, {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return {
    pid: child.pid!,
    send: (message: object) => child.send(message),
    next: () =>
      new Promise<Reply>((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`the ${name} process exited (${code})`));
        child.once("exit", onExit);
        child.once("message", (reply: Reply) => {
          child.off("exit", onExit);
          resolve(reply);
        });
      }),
    async stop(): Promise<void> {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ stop: true });
      await exited;
    },
  };
}

/** The DBOS side: a process of its own, told over IPC to run `total` workflows on `workers` loops. */
function startDbos(systemDatabaseUrl: string, sandboxUrl: string, poolSize: number) {
  const child = forkChild<{ ready?: true; done?: Sample; failed?: string }>(
    "effects-dbos.ts",
    [systemDatabaseUrl, sandboxUrl, String(poolSize)],
    "DBOS",
  );
  const ready = child.next();
  return {
    ready,
    pid: child.pid,
    async run(workers: number, total: number): Promise<Sample> {
      const reply = child.next();
      child.send({ run: { workers, total } });
      const { done, failed } = await reply;
      if (!done) throw new Error(`the DBOS side failed: ${failed}`);
      return done;
    },
    stop: child.stop,
  };
}

/**
 * The sandbox provider in its own process (bench/effects-sandbox.ts), so
 * that no side serves the provider on its own thread; with
 * BENCH_EFFECTS_SANDBOX=inline, in this process as before 2026-12-04 (the
 * ledger's thread then serves every provider request, DBOS's does not).
 */
async function startProvider(): Promise<{ url: string; pid: number | null; close: () => Promise<void> }> {
  if (process.env.BENCH_EFFECTS_SANDBOX === "inline")
    return { ...(await startSandbox({ port: 0, host: "127.0.0.1" })), pid: null };
  const child = forkChild<{ url: string }>("effects-sandbox.ts", [], "sandbox");
  const { url } = await child.next();
  return { url, pid: child.pid, close: child.stop };
}

const poolSize = Math.max(...levels) + 2;
const database = await createPostgresTestDatabase({ poolSize });
// The WAL each side wrote: the server's insert position before and after it.
// The sides run one at a time, each on its own database, so the difference is
// the side's rows and index entries (and the server's own few, the same for all).
const walReader = new pg.Client({ connectionString: database.url });
await walReader.connect();
async function walPosition(): Promise<number> {
  const { rows } = await walReader.query<{ at: string }>(
    "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS at",
  );
  return Number(rows[0]!.at);
}
const sandbox = await startProvider();
const withDbos = process.env.BENCH_EFFECTS_DBOS !== "off";
const dbosDatabase = withDbos ? await createEmptyPostgresDatabase() : null;
const dbos = dbosDatabase ? startDbos(dbosDatabase.url, sandbox.url, poolSize) : null;
const deps = {
  payments: new SandboxPaymentConnector({ baseUrl: sandbox.url }),
  crm: new SandboxCrmConnector({ baseUrl: sandbox.url }),
};
const { db } = database;
/**
 * The database's live announcements (docs/live-updates.md), on as a new
 * database has them unless BENCH_EFFECTS_LIVE=off: every write of a task,
 * an execution or a checkpoint then calls pg_notify in its transaction, and
 * PostgreSQL serializes the commits of notifying transactions whether or not
 * anyone listens. DBOS announces nothing, so `off` is the ledger without
 * that feature's cost, `on` the ledger as a server runs it.
 */
const live = process.env.BENCH_EFFECTS_LIVE === "off" ? "off" : "on";
await applyLiveUpdatesSetting(database.platformDb, live);
let call = 0;

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

try {
  await dbos?.ready;
  console.log(`# bench:effects  ${new Date().toISOString()}`);
  console.log(
    `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}; ${perLevel} refunds per level and side in ${rounds} alternating rounds; pools of ${poolSize}`,
  );
  console.log(
    `# the provider: ${process.env.BENCH_EFFECTS_SANDBOX === "inline" ? "in this process (BENCH_EFFECTS_SANDBOX=inline)" : "a process of its own"}`,
  );
  console.log(`# live announcements: ${live} (BENCH_EFFECTS_LIVE)`);
  console.log(`# load average at start: ${load()}\n`);
  const results: Array<{ workers: number; ledger: Side; performed: Side; dbos: Side; direct: Side }> = [];
  for (const workers of levels) {
    const runningTasks = async (side: string) => {
      const made: Array<{ id: string; version: number }> = [];
      for (let w = 0; w < workers; w++) {
        const { task } = await createTask(
          db,
          { workflow: "agent-task", intent_id: `bench-${side}-${workers}-${w}` },
          agent,
        );
        let version = task.version;
        for (const to of ["PLANNING", "READY", "RUNNING"])
          version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
        made.push({ id: task.id, version });
      }
      return made;
    };
    const tasks = await runningTasks("agent");
    const performTasks = await runningTasks("verity");
    const ledgerRefund = async (w: number) => {
      const task = tasks[w]!;
      const intent = await recordIntent(
        db,
        task.id,
        // `send`: the attempt is marked SENT in the intent's transaction (no markSent after it).
        {
          tool_call_id: `refund-${++call}`,
          tool: "payments.refund",
          request,
          expected_version: task.version,
          send: true,
        },
        agent,
      );
      if (intent.kind !== "proceed") throw new Error("unexpected receipt");
      const execution = intent.execution;
      // The intent answers with the execution as sent: the call needs no read of its own.
      const outcome = await performEffect(execution, deps);
      if (outcome.kind !== "succeeded") throw new Error(`refund ${outcome.kind}`);
      const done = await recordOutcome(
        db,
        execution.id,
        {
          attempt_id: execution.attemptId,
          outcome: "succeeded",
          result: outcome.record,
          evidence: { ...outcome.evidence },
        },
        agent,
        // The engine confirms an irreversible success with the provider before recording it: this run's sandbox.
        deps,
      );
      task.version = done.task!.version;
    };
    // Verity makes the call itself, through its connector (performToolCall): the agent's intent, the call and the outcome in one use case.
    const verityRefund = async (w: number) => {
      const task = performTasks[w]!;
      const done = await performToolCall(
        db,
        task.id,
        { tool_call_id: `refund-${++call}`, tool: "payments.refund", request, expected_version: task.version },
        agent,
        deps,
      );
      if (done.kind !== "performed" || done.outcome !== "succeeded") throw new Error(`refund ${done.kind}`);
      task.version = done.task!.version;
    };
    const directRefund = async () => {
      const n = ++call;
      const outcome = await deps.payments.refund({
        idempotencyKey: `direct-${n}`,
        amountCents: request.amount_cents,
        currency: request.currency,
        chargeId: request.charge_id,
        customerId: request.customer_id,
        metadata: { executionId: `direct-${n}`, taskId: "bench" },
      });
      if (outcome.kind !== "succeeded") throw new Error(`refund ${outcome.kind}`);
    };
    const warmup = Math.max(20, 2 * workers);
    await drive(workers, warmup, ledgerRefund);
    await drive(workers, warmup, verityRefund);
    await drive(workers, warmup, directRefund);
    await dbos?.run(workers, warmup);
    const empty = (): Side => ({
      count: 0,
      seconds: 0,
      latencies: [],
      cpu: { client: 0, provider: 0, database: 0 },
      walBytes: 0,
    });
    const [ledger, performed, direct, viaDbos] = [empty(), empty(), empty(), empty()];
    const sides: Array<[Side, (total: number) => Promise<Sample>, number]> = [
      [ledger, (total) => drive(workers, total, ledgerRefund), process.pid],
      [performed, (total) => drive(workers, total, verityRefund), process.pid],
      [direct, (total) => drive(workers, total, directRefund), process.pid],
    ];
    if (dbos) sides.push([viaDbos, (total) => dbos.run(workers, total), dbos.pid]);
    for (let r = 0; r < rounds; r++) {
      // Both sides' statistics as autovacuum keeps them on a database that has run a while (analyzeDatabase).
      await Promise.all([analyzeDatabase(database.url), dbosDatabase && analyzeDatabase(dbosDatabase.url)]);
      for (const [side, run, clientPid] of r % 2 === 0 ? sides : [...sides].reverse()) {
        const s = await measured(() => run(perLevel / rounds), clientPid, sandbox.pid);
        side.count += s.count;
        side.seconds += s.seconds;
        side.latencies.push(...s.latencies);
        side.cpu.client += s.cpu.client;
        side.cpu.provider += s.cpu.provider;
        side.cpu.database += s.cpu.database;
        side.walBytes += s.walBytes;
      }
    }
    results.push({ workers, ledger, performed, dbos: viaDbos, direct });
    console.log(
      `concurrency ${workers}: ledger ${rate(ledger).toFixed(0)}/s, Verity calls ${rate(performed).toFixed(0)}/s, DBOS ${rate(viaDbos).toFixed(0)}/s, direct ${rate(direct).toFixed(0)}/s (load ${load()})`,
    );
  }
  console.log(
    "\n| concurrency | ledger refunds/s | p50 ms | p99 ms | Verity calls/s | p50 ms | p99 ms | DBOS refunds/s | p50 ms | p99 ms | direct refunds/s | p50 ms | p99 ms | ledger/DBOS | Verity calls/DBOS | ledger/direct |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const { workers, ledger, performed, dbos: viaDbos, direct } of results) {
    const cells = [ledger, performed, viaDbos, direct].flatMap((side) => {
      const sorted = [...side.latencies].sort((a, b) => a - b);
      return [rate(side).toFixed(0), percentile(sorted, 50).toFixed(2), percentile(sorted, 99).toFixed(2)];
    });
    console.log(
      `| ${workers} | ${cells.join(" | ")} | ${(rate(ledger) / rate(viaDbos)).toFixed(2)}× | ${(rate(performed) / rate(viaDbos)).toFixed(2)}× | ${(rate(ledger) / rate(direct)).toFixed(2)}× |`,
    );
  }
  // What each refund cost the machine, by process: the ratio above is this table's totals upside down when the CPU is the limit.
  console.log(
    "\nCPU per refund in ms (client: the side's own process; provider: the sandbox's; database: every postgres process), and the WAL it wrote:\n",
  );
  console.log(
    "| concurrency | side | client | provider | database | total | WAL bytes |\n|---:|---|---:|---:|---:|---:|---:|",
  );
  for (const { workers, ledger, performed, dbos: viaDbos, direct } of results) {
    const named: Array<[string, Side]> = [
      ["ledger", ledger],
      ["Verity calls", performed],
      ["DBOS", viaDbos],
      ["direct", direct],
    ];
    for (const [name, side] of named) {
      if (side.count === 0) continue;
      const ms = (seconds: number) => ((seconds / side.count) * 1000).toFixed(2);
      const { client, provider, database } = side.cpu;
      console.log(
        `| ${workers} | ${name} | ${ms(client)} | ${ms(provider)} | ${ms(database)} | ${ms(client + provider + database)} | ${(side.walBytes / side.count).toFixed(0)} |`,
      );
    }
  }
  console.log(`\n# load average at end: ${load()}`);
} finally {
  await dbos?.stop();
  await walReader.end();
  await dbosDatabase?.drop();
  await sandbox.close();
  await database.drop();
}

function rate(side: Sample): number {
  return side.count / side.seconds;
}
