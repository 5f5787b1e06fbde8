/**
 * The spec's most important test: a worker killed (SIGKILL, a real process)
 * right after the irreversible call and before its result is persisted —
 * and at every other step boundary — mixed with injected timeouts, dropped
 * responses, errors around the provider's commit and duplicate webhooks.
 * After recovery (the reconciler, then a restarted worker) there must be zero
 * duplicate refunds at the provider, every task COMPLETED or waiting in the
 * review queue (none silently stuck), and every invariant must hold,
 * checked against the database and the provider's own records.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox-crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox-payment";
import { reconcileExecution } from "@/lib/engine/reconciler";
import { createTask, transitionTask, type Actor } from "@/lib/engine/tasks";
import { startSandbox } from "@/lib/sandbox/server";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import type { FaultPoint } from "./chaos-refund-worker";

const trials = Number(process.env.CHAOS_TRIALS ?? 200);
const parallel = Number(process.env.CHAOS_PARALLEL ?? 6);
const workerSource = path.join(import.meta.dirname, "chaos-refund-worker.ts");
// Bundled once: hundreds of worker processes start in a fraction of the time
// tsx needs to compile each. Dependencies stay external (resolved from the
// repo's node_modules), so the bundle runs exactly the code under test.
const workerScript = path.resolve("node_modules/.cache/verity/chaos-refund-worker.mjs");
const killPoints: Array<FaultPoint | undefined> = ["after_call", "after_intent", "after_sent", "after_outcome", undefined];
const faultSets: string[][] = [[], ["timeout_after_commit"], ["drop_response"], ["error_before_commit"], ["error_after_commit"], ["duplicate_webhook"], ["latency=50"]];
const setup: Actor = { identity: "spiffe://verity.test/agent/chaos-setup", kind: "agent" };

let database: PostgresTestDatabase;
let sandbox: Awaited<ReturnType<typeof startSandbox>>;

beforeAll(async () => {
  mkdirSync(path.dirname(workerScript), { recursive: true });
  await build({ entryPoints: [workerSource], outfile: workerScript, bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", logLevel: "warning" });
  database = await createPostgresTestDatabase({ poolSize: 8 });
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await sandbox?.close();
  await database?.drop();
});

/** A deterministic pseudo-random sequence, so a failing trial can be replayed from its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function runWorker(taskId: string, killAt: FaultPoint | undefined, faults: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [workerScript], {
      env: {
        ...process.env,
        CHAOS_DATABASE_URL: database.url,
        CHAOS_TASK_ID: taskId,
        CHAOS_SANDBOX_URL: sandbox.url,
        CHAOS_KILL_AT: killAt ?? "",
        CHAOS_FAULTS: faults.join(","),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("exit", (code, signal) => resolve({ code, signal, output }));
  });
}

interface TrialResult {
  seed: number;
  killAt: FaultPoint | undefined;
  faults: string[];
  killed: boolean;
  finalStatus: string;
  rounds: number;
  bugs: string[];
}

async function trial(seed: number): Promise<TrialResult> {
  const random = rng(seed);
  const killAt = killPoints[Math.floor(random() * killPoints.length)];
  const faults = faultSets[Math.floor(random() * faultSets.length)] ?? [];
  const { db } = database;
  const { task } = await createTask(
    db,
    { workflow: "agent-task", intent_id: `chaos-${seed}`, subtasks: [{ id: "issue-refund", title: "Issue the refund", mandatory: true }] },
    setup,
  );
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"]) version = (await transitionTask(db, task.id, { expected_version: version, to }, setup)).task.version;

  const bugs: string[] = [];
  const first = await runWorker(task.id, killAt, faults);
  const killed = first.signal === "SIGKILL";
  if (first.code === 1) bugs.push(`worker crashed: ${first.output.slice(-800)}`);

  // Recovery: the reconciler settles what the dead or confused worker left
  // (a clean connector: reconciliation looks the provider up, it does not
  // inject faults), then the worker restarts and continues from the last
  // committed transition. A few rounds, as a deployment would.
  const clean = { payments: new SandboxPaymentConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }), crm: new SandboxCrmConnector({ baseUrl: sandbox.url, timeoutMs: 3_000 }) };
  let rounds = 0;
  let status = (await db.task.findUniqueOrThrow({ where: { id: task.id } })).status;
  while (status !== "COMPLETED" && status !== "WAITING_FOR_HUMAN" && rounds < 4) {
    rounds++;
    for (const execution of await db.execution.findMany({ where: { taskId: task.id, status: { in: ["INTENT_RECORDED", "SENT", "OUTCOME_UNKNOWN"] } } })) {
      // `now` far ahead: the dead worker's SENT and INTENT_RECORDED count as stale at once.
      await reconcileExecution(db, execution.id, clean, { now: new Date(Date.now() + 3_600_000), sentTimeoutMs: 1_000 }).catch((error: unknown) => {
        bugs.push(`reconcile failed: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    const again = await runWorker(task.id, undefined, []);
    if (again.code === 1) bugs.push(`restarted worker crashed: ${again.output.slice(-800)}`);
    status = (await db.task.findUniqueOrThrow({ where: { id: task.id } })).status;
  }
  return { seed, killAt, faults, killed, finalStatus: status, rounds, bugs };
}

describe("chaos: SIGKILL at every step boundary, with provider faults", () => {
  it(`${trials} randomized trials: no duplicate refund, nobody stuck, invariants hold`, { timeout: 1_500_000 }, async () => {
    const results: TrialResult[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < trials) results.push(await trial(1000 + next++));
      }),
    );
    const { db } = database;

    // 1. Zero duplicate refunds, from the provider's own records.
    const refunds = (await (await fetch(`${sandbox.url}/v1/refunds`)).json()) as { data: Array<{ idempotency_key: string; metadata: { task_id?: string } }> };
    const perTask = new Map<string, number>();
    for (const r of refunds.data) perTask.set(r.metadata.task_id ?? "?", (perTask.get(r.metadata.task_id ?? "?") ?? 0) + 1);
    const duplicates = [...perTask.entries()].filter(([, n]) => n > 1);
    expect(duplicates, "tasks refunded more than once at the provider").toEqual([]);

    // 2. Nobody silently stuck: COMPLETED, or frozen in the review queue with an open review.
    const executions = await db.execution.findMany({ include: { events: true } });
    const reviews = await db.review.findMany();
    for (const r of results) {
      const task = await db.task.findFirstOrThrow({ where: { intentId: `chaos-${r.seed}` } });
      const execution = executions.find((e) => e.taskId === task.id);
      if (task.status === "WAITING_FOR_HUMAN") {
        expect(reviews.some((v) => v.executionId === execution?.id && v.status === "OPEN"), `seed ${r.seed}: waiting for a person without an open review`).toBe(true);
      } else {
        expect(task.status, `seed ${r.seed} (${r.killAt ?? "no kill"}, ${r.faults.join(",") || "no fault"}) ended ${task.status}`).toBe("COMPLETED");
      }
      expect(r.bugs, `seed ${r.seed}`).toEqual([]);

      // 3. Invariants, against the database and the provider.
      const refundsOfTask = perTask.get(task.id) ?? 0;
      if (task.status === "COMPLETED") {
        expect(refundsOfTask, `seed ${r.seed}: completed with ${refundsOfTask} refunds`).toBe(1);
        expect(["SUCCEEDED", "RECONCILED_SUCCEEDED"]).toContain(execution?.status);
        const state = task.state as { subtasks: Array<{ id: string; mandatory: boolean; status: string }> };
        expect(state.subtasks.filter((s) => s.mandatory && s.status !== "COMPLETED")).toEqual([]);
      }
      if (execution && ["SUCCEEDED", "RECONCILED_SUCCEEDED"].includes(execution.status)) {
        expect(refundsOfTask, `seed ${r.seed}: succeeded without a refund at the provider`).toBe(1);
        expect(execution.evidence, `seed ${r.seed}: success without evidence`).not.toBeNull();
      }
      const versions = (await db.transition.findMany({ where: { taskId: task.id }, select: { toVersion: true }, orderBy: { toVersion: "asc" } })).map((t) => t.toVersion);
      expect(versions, `seed ${r.seed}: transition log has gaps`).toEqual(Array.from({ length: task.version }, (_, i) => i + 1));
    }
    expect(await db.divergenceAlert.count({ where: { status: "OPEN" } }), "divergence alerts raised by a clean run").toBe(0);

    const byKill = new Map<string, number>();
    for (const r of results) byKill.set(`${r.killAt ?? "none"}/${r.killed ? "killed" : "survived"}`, (byKill.get(`${r.killAt ?? "none"}/${r.killed ? "killed" : "survived"}`) ?? 0) + 1);
    const finals = new Map<string, number>();
    for (const r of results) finals.set(r.finalStatus, (finals.get(r.finalStatus) ?? 0) + 1);
    console.log(
      `chaos: ${results.length} trials, ${results.filter((r) => r.killed).length} workers killed by SIGKILL, ${refunds.data.length} refunds at the provider, ` +
        `final ${JSON.stringify(Object.fromEntries(finals))}, kill points ${JSON.stringify(Object.fromEntries(byKill))}`,
    );
    // The test must actually have killed workers right after the irreversible call.
    expect(results.filter((r) => r.killAt === "after_call" && r.killed).length).toBeGreaterThan(0);
  });
});
