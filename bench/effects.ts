/**
 * The cost of durability for side effects: refunds per second through the
 * execution ledger (intent → sent → call → outcome, each step committed on
 * PostgreSQL) next to the same refund calls made directly to the sandbox
 * provider in the same run, with no faults.
 *
 *   npm run bench:effects                   # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_EFFECTS=600 BENCH_CONCURRENCY=1,8 npm run bench:effects
 *
 * Each worker drives its own task (RUNNING → WAITING_FOR_TOOL → RUNNING per
 * refund, a new tool call id each time), so this measures the ledger's
 * writes, not contention. Ledger and direct calls alternate in rounds so
 * drift on a shared machine favours neither.
 */
import os from "node:os";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { performEffect } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { startSandbox } from "@/programs/sandbox/server";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const levels = (process.env.BENCH_CONCURRENCY ?? "1,8").split(",").map(Number);
const perLevel = Number(process.env.BENCH_EFFECTS ?? 400);
const rounds = 4;
const agent: Actor = { identity: "spiffe://verity.bench/agent/refunds", kind: "agent" };
const request = { amount_cents: 1000, currency: "usd", charge_id: "ch_bench", customer_id: "cus_bench" };

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : Number.NaN;
}

async function drive(
  workers: number,
  total: number,
  op: (worker: number) => Promise<void>,
): Promise<{ count: number; seconds: number; latencies: number[] }> {
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

const database = await createPostgresTestDatabase({ poolSize: Math.max(...levels) + 2 });
const sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
const deps = {
  payments: new SandboxPaymentConnector({ baseUrl: sandbox.url }),
  crm: new SandboxCrmConnector({ baseUrl: sandbox.url }),
};
const { db } = database;
let call = 0;

try {
  console.log(
    `bench:effects on ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}; ${perLevel} refunds per level and side`,
  );
  console.log("concurrency | ledger refunds/s | p50 ms | p99 ms | direct refunds/s | p50 ms | p99 ms | ledger/direct");
  for (const workers of levels) {
    const tasks: Array<{ id: string; version: number }> = [];
    for (let w = 0; w < workers; w++) {
      const { task } = await createTask(db, { workflow: "agent-task", intent_id: `bench-${workers}-${w}` }, agent);
      let version = task.version;
      for (const to of ["PLANNING", "READY", "RUNNING"])
        version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
      tasks.push({ id: task.id, version });
    }
    const ledgerRefund = async (w: number) => {
      const task = tasks[w]!;
      const intent = await recordIntent(
        db,
        task.id,
        { tool_call_id: `refund-${++call}`, tool: "payments.refund", request, expected_version: task.version },
        agent,
      );
      if (intent.kind !== "proceed") throw new Error("unexpected receipt");
      const execution = intent.execution;
      await markSent(db, execution.id, { attempt_id: execution.attemptId }, agent);
      const outcome = await performEffect(await getExecutionRowOrThrow(db, execution.id), deps);
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
    await drive(workers, 20, ledgerRefund); // warm-up
    await drive(workers, 20, directRefund);
    const ledger = { count: 0, seconds: 0, latencies: [] as number[] };
    const direct = { count: 0, seconds: 0, latencies: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      for (const [side, op] of [
        [ledger, ledgerRefund],
        [direct, directRefund],
      ] as const) {
        const s = await drive(workers, perLevel / rounds, op);
        side.count += s.count;
        side.seconds += s.seconds;
        side.latencies.push(...s.latencies);
      }
    }
    const fmt = (side: typeof ledger) => {
      const sorted = [...side.latencies].sort((a, b) => a - b);
      return [
        (side.count / side.seconds).toFixed(0),
        percentile(sorted, 50).toFixed(2),
        percentile(sorted, 99).toFixed(2),
      ];
    };
    const [lr, l50, l99] = fmt(ledger);
    const [dr, d50, d99] = fmt(direct);
    const ratio = ledger.count / ledger.seconds / (direct.count / direct.seconds);
    console.log(
      `${String(workers).padStart(11)} | ${lr!.padStart(16)} | ${l50!.padStart(6)} | ${l99!.padStart(6)} | ${dr!.padStart(16)} | ${d50!.padStart(6)} | ${d99!.padStart(6)} | ${(ratio * 100).toFixed(0)}%`,
    );
  }
} finally {
  await sandbox.close();
  await database.drop();
}
