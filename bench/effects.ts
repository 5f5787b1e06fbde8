/**
 * The cost of durability for side effects: refunds per second through the
 * execution ledger (the intent sent with itself → call → the provider's
 * confirmation of the irreversible success → outcome: two commits on
 * PostgreSQL, recordIntent's `send`), the same refund made by Verity itself
 * through its connector (performToolCall: no confirmation lookup, the
 * provider answered Verity's own request), next to the same refund calls made directly to the sandbox
 * provider, and next to a DBOS Transact workflow of one step making the same
 * call (bench/effects-dbos.ts: its own process, its own system database on
 * the same PostgreSQL), all in the same run, with no faults.
 *
 *   npm run bench:effects                   # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_EFFECTS=600 BENCH_CONCURRENCY=1,8 npm run bench:effects
 *   BENCH_EFFECTS_DBOS=off npm run bench:effects   # ledger and direct only (bench:encryption)
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

/** The DBOS side: a process of its own, told over IPC to run `total` workflows on `workers` loops. */
function startDbos(systemDatabaseUrl: string, sandboxUrl: string, poolSize: number) {
  const child = fork(
    path.join(import.meta.dirname, "effects-dbos.ts"),
    [systemDatabaseUrl, sandboxUrl, String(poolSize)],
    {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, NODE_ENV: "production" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  type Reply = { ready?: true; done?: Sample; failed?: string };
  const next = () =>
    new Promise<Reply>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the DBOS process exited (${code})`));
      child.once("exit", onExit);
      child.once("message", (reply: Reply) => {
        child.off("exit", onExit);
        resolve(reply);
      });
    });
  const ready = next();
  return {
    ready,
    async run(workers: number, total: number): Promise<Sample> {
      const reply = next();
      child.send({ run: { workers, total } });
      const { done, failed } = await reply;
      if (!done) throw new Error(`the DBOS side failed: ${failed}`);
      return done;
    },
    async stop(): Promise<void> {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send({ stop: true });
      await exited;
    },
  };
}

const poolSize = Math.max(...levels) + 2;
const database = await createPostgresTestDatabase({ poolSize });
const sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
const withDbos = process.env.BENCH_EFFECTS_DBOS !== "off";
const dbosDatabase = withDbos ? await createEmptyPostgresDatabase() : null;
const dbos = dbosDatabase ? startDbos(dbosDatabase.url, sandbox.url, poolSize) : null;
const deps = {
  payments: new SandboxPaymentConnector({ baseUrl: sandbox.url }),
  crm: new SandboxCrmConnector({ baseUrl: sandbox.url }),
};
const { db } = database;
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
  console.log(`# load average at start: ${load()}\n`);
  const results: Array<{ workers: number; ledger: Sample; performed: Sample; dbos: Sample; direct: Sample }> = [];
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
    const ledger: Sample = { count: 0, seconds: 0, latencies: [] };
    const performed: Sample = { count: 0, seconds: 0, latencies: [] };
    const direct: Sample = { count: 0, seconds: 0, latencies: [] };
    const viaDbos: Sample = { count: 0, seconds: 0, latencies: [] };
    const sides: Array<[Sample, (total: number) => Promise<Sample>]> = [
      [ledger, (total) => drive(workers, total, ledgerRefund)],
      [performed, (total) => drive(workers, total, verityRefund)],
      [direct, (total) => drive(workers, total, directRefund)],
    ];
    if (dbos) sides.push([viaDbos, (total) => dbos.run(workers, total)]);
    for (let r = 0; r < rounds; r++) {
      // Both sides' statistics as autovacuum keeps them on a database that has run a while (analyzeDatabase).
      await Promise.all([analyzeDatabase(database.url), dbosDatabase && analyzeDatabase(dbosDatabase.url)]);
      for (const [side, run] of r % 2 === 0 ? sides : [...sides].reverse()) {
        const s = await run(perLevel / rounds);
        side.count += s.count;
        side.seconds += s.seconds;
        side.latencies.push(...s.latencies);
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
  console.log(`\n# load average at end: ${load()}`);
} finally {
  await dbos?.stop();
  await dbosDatabase?.drop();
  await sandbox.close();
  await database.drop();
}

function rate(side: Sample): number {
  return side.count / side.seconds;
}
