/**
 * The spec's most important test: a worker killed (SIGKILL, a real process)
 * right after the irreversible call and before its result is persisted —
 * and at every other step boundary — mixed with injected timeouts, dropped
 * responses, errors around the provider's commit and duplicate webhooks;
 * two processes of one agent identity racing on the same task; and the
 * provider itself SIGKILLed mid-request and restarted from its journal.
 * After recovery (the reconciler, then a restarted worker) there must be
 * zero duplicate refunds at the provider, every task COMPLETED or waiting
 * for a person (none silently stuck, none FAILED with its refund made), and
 * the consistency checker (lib/use-cases/monitor/consistency-check.ts) must find
 * nothing, against the database and the providers' own records.
 *
 * Workers are engine clients on PostgreSQL (no Verity HTTP server runs
 * here), so the servers that can die are the provider and the database;
 * the provider is killed here, the database's half-done transactions in
 * partial-write.test.ts.
 *
 * Where the time goes (measured, docs/consistency.md "The chaos test"): a
 * worker process costs about 0.7 s of CPU before its first step (module
 * loading, Prisma's query compiler in WebAssembly), and the old test
 * started two or more per trial on a 2-core machine. Worker processes are
 * now forked warm and reused for every life that is not killed
 * (chaos-refund-worker.ts), so only a kill costs a new process.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import {
  checkConsistency,
  fetchProviderRecords,
  isFailureStatus,
  type ConsistencyReport,
  type ProviderRecords,
} from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { reconcileExecution } from "@/lib/use-cases/reconciliation/reconciler";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { startSandbox } from "@/programs/sandbox/server";
import { bundledScript } from "@/tests/helpers/bundled-script";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import type { FaultPoint, LifeResult, ToParent, ToWorker, WorkerJob } from "./chaos-refund-worker";

/**
 * Every trial's kill point and faults come from its number, going through
 * every combination in turn, so a group covers each combination a known
 * number of times. (Drawn at random, 200 trials over the 35 kill-point ×
 * fault-set combinations left one of them untried in about one run in ten.)
 */
const killRounds = Number(process.env.CHAOS_ROUNDS ?? 3);
const twinRounds = Number(process.env.CHAOS_TWIN_ROUNDS ?? 1);
const providerKillRounds = Number(process.env.CHAOS_PROVIDER_KILL_ROUNDS ?? 1);
const parallel = Number(process.env.CHAOS_PARALLEL ?? 8);
/** Lanes of provider-kill trials, each with its own provider process (a kill must not take a neighbour's reconciliation down with it). */
const providerLanes = 2;
/** Short, renewed by the worker every third of it: a killed life's lease runs out within this, and the next life waits exactly that. */
const leaseTtlSeconds = 2;

const killPoints: Array<FaultPoint | undefined> = [
  "after_call",
  "after_intent",
  "after_sent",
  "after_outcome",
  undefined,
];
const faultSets: string[][] = [
  [],
  ["timeout_after_commit"],
  ["drop_response"],
  ["error_before_commit"],
  ["error_after_commit"],
  ["duplicate_webhook"],
  ["latency=50"],
];
/** The provider-kill trials: what holds the refund at the provider, and when after the call it is killed. */
const providerFaultSets: string[][] = [
  ["latency=300"],
  ["timeout_after_commit"],
  ["latency=150", "timeout_after_commit"],
  [],
];
const strikeDelaysMs = [0, 40, 120, 250];
const trials = killRounds * killPoints.length * faultSets.length;
const twinTrials = twinRounds * killPoints.length * faultSets.length;
const providerKillTrials = providerKillRounds * providerFaultSets.length * strikeDelaysMs.length;

/** Trial `n` of a group crossing `first` with `second`: consecutive trials (run side by side in the lanes) differ in both. */
function combination<A, B>(n: number, first: readonly A[], second: readonly B[]): [A, B] {
  return [first[n % first.length] as A, second[Math.floor(n / first.length) % second.length] as B];
}

const setup: Actor = { identity: "spiffe://verity.test/agent/chaos-setup", kind: "agent" };
/** A restarted worker keeps its identity (the same SPIFFE ID) and must still get a lease of its own. */
const workerIdentity = "spiffe://verity.test/agent/chaos-refund-worker";
/** Two deployed processes of one agent. */
const refundBot = "spiffe://verity.test/agent/refund-bot";

let workerScript: string;
let sandboxScript: string;
let database: PostgresTestDatabase;
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let pool: WorkerPool;
const providers: ProviderProcess[] = [];

beforeAll(async () => {
  // Bundled once (tests/helpers/bundled-script.ts): processes start in a
  // fraction of the time tsx needs to compile each, and dependencies stay
  // external, so the bundle runs exactly the code under test.
  workerScript = bundledScript(path.join(import.meta.dirname, "chaos-refund-worker.ts"), "chaos-refund-worker");
  sandboxScript = bundledScript(path.resolve("scripts/sandbox.ts"), "sandbox");
  database = await createPostgresTestDatabase({ poolSize: 8 });
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
  pool = new WorkerPool(workerScript, database.url, parallel + 2);
});
afterAll(async () => {
  await pool?.close();
  await Promise.all(providers.map((p) => p.stop()));
  await sandbox?.close();
  await database?.drop();
});

// ---------------------------------------------------------------------------
// Worker processes: forked warm, reused for every life that ends normally.
// ---------------------------------------------------------------------------

type LifeOutcome = LifeResult | { kind: "killed" };

class WorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output = "";
  private onMessage: ((m: ToParent) => void) | null = null;

  constructor(script: string, databaseUrl: string) {
    this.child = fork(script, [], {
      env: { ...process.env, CHAOS_DATABASE_URL: databaseUrl },
      execArgv: ["--liftoff-only"],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    const keep = (d: Buffer) => (this.output = (this.output + d.toString()).slice(-4000));
    this.child.stdout?.on("data", keep);
    this.child.stderr?.on("data", keep);
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.ready = new Promise((resolve, reject) => {
      this.child.on("message", (m: ToParent) => (m.type === "ready" ? resolve() : this.onMessage?.(m)));
      void this.exited.then(() => reject(new Error(`worker process exited before it was ready: ${this.output}`)));
    });
    this.ready.catch(() => undefined);
  }

  /** One life; resolves with its result, or `killed` when the process died of its fault point. */
  async run(job: WorkerJob, onCalling?: (m: Extract<ToParent, { type: "calling" }>) => void): Promise<LifeOutcome> {
    await this.ready;
    const done = new Promise<LifeOutcome>((resolve) => {
      this.onMessage = (m) => {
        if (m.type === "calling" && m.lifeId === job.lifeId) onCalling?.(m);
        if (m.type === "done" && m.lifeId === job.lifeId) resolve(m.result);
      };
    });
    this.child.send({ type: "run", job } satisfies ToWorker);
    const died = this.exited.then(({ signal }): LifeOutcome =>
      signal === "SIGKILL"
        ? { kind: "killed" }
        : { kind: "bug", detail: `worker process exited (${signal ?? "no signal"}): ${this.output}` },
    );
    const outcome = await Promise.race([done, died]);
    this.onMessage = null;
    return outcome;
  }
}

class WorkerPool {
  private spare: WorkerProcess[] = [];
  private lives = 0;
  started = 0;

  constructor(
    private readonly script: string,
    private readonly databaseUrl: string,
    private readonly size: number,
  ) {
    for (let i = 0; i < size; i++) this.spare.push(this.fork());
  }

  private fork(): WorkerProcess {
    this.started++;
    return new WorkerProcess(this.script, this.databaseUrl);
  }

  async run(
    job: Omit<WorkerJob, "lifeId" | "leaseTtlSeconds">,
    onCalling?: (m: Extract<ToParent, { type: "calling" }>) => void,
  ): Promise<LifeOutcome> {
    const worker = this.spare.shift() ?? this.fork();
    const outcome = await worker.run({ ...job, lifeId: `life-${++this.lives}`, leaseTtlSeconds }, onCalling);
    // A killed process is replaced at once, so the next life finds a warm one.
    if (outcome.kind === "killed" || outcome.kind === "bug") {
      worker.child.kill("SIGKILL");
      this.spare.push(this.fork());
    } else if (this.spare.length < this.size) {
      this.spare.push(worker);
    } else {
      worker.child.disconnect();
    }
    return outcome;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.spare.map((w) => {
        if (w.child.connected) w.child.disconnect();
        return w.exited;
      }),
    );
  }
}

// ---------------------------------------------------------------------------
// A provider in its own process, journaled, that can be SIGKILLed and
// restarted from its journal on the same port.
// ---------------------------------------------------------------------------

class ProviderProcess {
  private child: ChildProcess | null = null;
  private port = 0;
  url = "";
  /** Resolves when the current process listens; a kill replaces it. */
  ready: Promise<void> = Promise.resolve();
  kills = 0;

  constructor(
    private readonly script: string,
    private readonly journal: string,
  ) {}

  start(): Promise<void> {
    const child = spawn(process.execPath, [this.script], {
      env: {
        ...process.env,
        SANDBOX_PORT: String(this.port),
        SANDBOX_HOST: "127.0.0.1",
        SANDBOX_JOURNAL: this.journal,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.ready = new Promise((resolve, reject) => {
      let out = "";
      const onData = (d: Buffer) => {
        out += d.toString();
        const m = /sandbox: listening on (http:\/\/\S+)/.exec(out);
        if (!m?.[1]) return;
        child.stdout?.off("data", onData);
        this.url = m[1];
        this.port = Number(new URL(this.url).port);
        resolve();
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
      child.once("exit", (code, signal) =>
        reject(new Error(`provider exited (${code ?? signal}) before listening: ${out}`)),
      );
    });
    return this.ready;
  }

  /** SIGKILL, wait for the process to be gone, start again from the same journal. */
  async killAndRestart(): Promise<void> {
    await this.ready;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.kills++;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
    await this.start();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await gone;
  }
}

// ---------------------------------------------------------------------------
// Trials
// ---------------------------------------------------------------------------

interface TrialResult {
  /** The trial's number in its group: it decides the kill point and faults, so a failure names what to replay. */
  trial: number;
  taskId: string;
  kind: "kill" | "twin" | "provider-kill";
  killAt: FaultPoint | undefined;
  faults: string[];
  killed: boolean;
  /** What each first life ended as: done, refused (with code), killed, bug. */
  firstLives: string[];
  finalStatus: string;
  rounds: number;
  bugs: string[];
}

async function runningTask(trial: number, prefix: string): Promise<string> {
  const { db } = database;
  const { task } = await createTask(
    db,
    {
      workflow: "agent-task",
      intent_id: `${prefix}-${trial}`,
      subtasks: [{ id: "issue-refund", title: "Issue the refund", mandatory: true }],
    },
    setup,
  );
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(db, task.id, { expected_version: version, to }, setup)).task.version;
  return task.id;
}

function describeLife(outcome: LifeOutcome): string {
  if (outcome.kind === "refused") return `refused ${outcome.code}`;
  // "completed", "handed over (RECONCILING)": how far the life got on its own.
  return outcome.kind === "done" ? outcome.detail : outcome.kind;
}

/** Waits until the task's lease has run out on the database's clock: the deadline a killed life leaves behind. */
async function leaseEnded(taskId: string): Promise<void> {
  const rows = await database.db.$queryRaw<Array<{ ms: number }>>`
    SELECT GREATEST(0, EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::float8 AS ms FROM leases WHERE task_id = ${taskId}`;
  const ms = rows[0]?.ms ?? 0;
  if (ms > 0) await delay(ms + 25);
}

/**
 * Recovery: the reconciler settles what the dead or confused worker left
 * (a clean connector: reconciliation looks the provider up, it does not
 * inject faults), then a restarted worker continues from the last committed
 * transition. A few rounds, as a deployment would.
 */
async function recover(
  taskId: string,
  providerUrl: string,
  identity: string,
  bugs: string[],
  beforeEachRound?: () => Promise<void>,
): Promise<{ status: string; rounds: number }> {
  const { db } = database;
  const clean = {
    payments: new SandboxPaymentConnector({ baseUrl: providerUrl, timeoutMs: 3_000 }),
    crm: new SandboxCrmConnector({ baseUrl: providerUrl, timeoutMs: 3_000 }),
  };
  let rounds = 0;
  let status = (await db.task.findFirstOrThrow({ where: { id: taskId } })).status;
  while (status !== "COMPLETED" && status !== "WAITING_FOR_HUMAN" && rounds < 4) {
    rounds++;
    await beforeEachRound?.();
    for (const execution of await db.execution.findMany({
      where: { taskId, status: { in: ["INTENT_RECORDED", "SENT", "OUTCOME_UNKNOWN"] } },
    })) {
      // `now` far ahead: the dead worker's SENT and INTENT_RECORDED count as stale at once.
      await reconcileExecution(db, execution.id, clean, {
        now: new Date(Date.now() + 3_600_000),
        sentTimeoutMs: 1_000,
      }).catch((error: unknown) => {
        bugs.push(`reconcile failed: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
    await leaseEnded(taskId);
    const again = await pool.run({ taskId, sandboxUrl: providerUrl, faults: [], identity });
    if (again.kind === "bug") bugs.push(`restarted worker crashed: ${again.detail.slice(-800)}`);
    status = (await db.task.findFirstOrThrow({ where: { id: taskId } })).status;
  }
  return { status, rounds };
}

async function killTrial(trial: number): Promise<TrialResult> {
  const [killAt, faults] = combination(trial, killPoints, faultSets);
  const taskId = await runningTask(trial, "chaos");
  const bugs: string[] = [];
  const first = await pool.run({ taskId, sandboxUrl: sandbox.url, killAt, faults, identity: workerIdentity });
  if (first.kind === "bug") bugs.push(`worker crashed: ${first.detail.slice(-800)}`);
  const { status, rounds } = await recover(taskId, sandbox.url, workerIdentity, bugs);
  return {
    trial,
    taskId,
    kind: "kill",
    killAt,
    faults,
    killed: first.kind === "killed",
    firstLives: [describeLife(first)],
    finalStatus: status,
    rounds,
    bugs,
  };
}

/** Two processes of refund-bot start on the same task at the same moment; one of them killed at a step boundary (or not), with one of the fault sets. */
async function twinTrial(trial: number): Promise<TrialResult> {
  const [killAt, faults] = combination(trial, killPoints, faultSets);
  const taskId = await runningTask(trial, "twin");
  const bugs: string[] = [];
  const lives = await Promise.all([
    pool.run({ taskId, sandboxUrl: sandbox.url, killAt, faults, identity: refundBot }),
    pool.run({ taskId, sandboxUrl: sandbox.url, faults, identity: refundBot }),
  ]);
  for (const life of lives) if (life.kind === "bug") bugs.push(`worker crashed: ${life.detail.slice(-800)}`);
  const { status, rounds } = await recover(taskId, sandbox.url, refundBot, bugs);
  return {
    trial,
    taskId,
    kind: "twin",
    killAt,
    faults,
    killed: lives.some((l) => l.kind === "killed"),
    firstLives: lives.map(describeLife),
    finalStatus: status,
    rounds,
    bugs,
  };
}

/**
 * The provider is SIGKILLed while the worker's refund is on its way or held
 * there (a latency before its commit, an answer withheld after it), at a
 * set moment after the worker says it is calling, and restarted from its
 * journal: whatever it committed survives, whatever it had not is gone, and
 * the worker sees a reset or a refused connection.
 */
async function providerKillTrial(trial: number, provider: ProviderProcess): Promise<TrialResult> {
  const [faults, strikeAfterMs] = combination(trial, providerFaultSets, strikeDelaysMs);
  const taskId = await runningTask(trial, "provider-kill");
  const bugs: string[] = [];
  let strike: Promise<void> | null = null;
  // Once per trial: a life whose first call found the provider down calls again.
  const first = await pool.run({ taskId, sandboxUrl: provider.url, faults, identity: workerIdentity }, () => {
    strike ??= delay(strikeAfterMs).then(() => provider.killAndRestart());
  });
  if (first.kind === "bug") bugs.push(`worker crashed: ${first.detail.slice(-800)}`);
  await strike;
  const { status, rounds } = await recover(taskId, provider.url, workerIdentity, bugs, () => provider.ready);
  return {
    trial,
    taskId,
    kind: "provider-kill",
    killAt: undefined,
    faults: [...faults, `kill+${strikeAfterMs}ms`],
    killed: false,
    firstLives: [describeLife(first)],
    finalStatus: status,
    rounds,
    bugs,
  };
}

async function inLanes(
  count: number,
  lanes: number,
  run: (i: number, lane: number) => Promise<TrialResult>,
): Promise<TrialResult[]> {
  const results: TrialResult[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (next < count) results.push(await run(next++, lane));
    }),
  );
  return results;
}

// ---------------------------------------------------------------------------
// What must hold after every group of trials
// ---------------------------------------------------------------------------

async function allProviderRecords(): Promise<ProviderRecords> {
  const all = await Promise.all([
    fetchProviderRecords(sandbox.url),
    ...providers.map(async (p) => (await p.ready, fetchProviderRecords(p.url))),
  ]);
  return { refunds: all.flatMap((r) => r.refunds), notes: all.flatMap((r) => r.notes) };
}

/** The consistency checker over everything, its findings kept to these trials' tasks (and findings about no task at all). */
async function expectConsistent(results: readonly TrialResult[]): Promise<ConsistencyReport> {
  const report = await checkConsistency(database.db, { provider: await allProviderRecords() });
  const ours = new Set(results.map((r) => r.taskId));
  const findings = report.findings.filter((f) => f.taskId === null || ours.has(f.taskId));
  expect(findings, `consistency checker:\n${formatConsistencyReport({ ...report, findings })}`).toEqual([]);
  return report;
}

async function expectEveryTaskAtRest(results: readonly TrialResult[], records: ProviderRecords): Promise<void> {
  const { db } = database;
  const refundsOf = new Map<string, number>();
  for (const r of records.refunds)
    refundsOf.set(r.metadata.task_id ?? "?", (refundsOf.get(r.metadata.task_id ?? "?") ?? 0) + 1);
  const tasks = new Map(
    (await db.task.findMany({ where: { id: { in: results.map((r) => r.taskId) } } })).map((t) => [t.id, t]),
  );
  const executions = await db.execution.findMany({ where: { taskId: { in: results.map((r) => r.taskId) } } });
  const reviews = await db.review.findMany({
    where: { taskId: { in: results.map((r) => r.taskId) }, status: { in: ["OPEN", "ESCALATED"] } },
  });
  const alerts = await db.divergenceAlert.findMany({
    where: { taskId: { in: results.map((r) => r.taskId) }, status: { not: "RESOLVED" } },
  });
  for (const r of results) {
    const task = tasks.get(r.taskId);
    const label = `${r.kind} trial ${r.trial} (${r.killAt ?? "no kill"}, ${r.faults.join(",") || "no fault"}, first lives ${r.firstLives.join(" + ")})`;
    expect(r.bugs, label).toEqual([]);
    const refunds = refundsOf.get(r.taskId) ?? 0;
    // 1. Zero duplicate refunds, from the provider's own records.
    expect(refunds, `${label}: refunds at the provider`).toBeLessThanOrEqual(1);
    // 2. Nobody silently stuck, nobody failed with the money gone: COMPLETED with its one refund, or with a person.
    if (task?.status === "COMPLETED") {
      expect(refunds, `${label}: completed with ${refunds} refunds`).toBe(1);
      const execution = executions.find((e) => e.taskId === r.taskId);
      expect(["SUCCEEDED", "RECONCILED_SUCCEEDED"], label).toContain(execution?.status);
    } else {
      expect(isFailureStatus(task?.status ?? "") && refunds > 0, `${label}: ${task?.status} with its refund made`).toBe(
        false,
      );
      expect(task?.status, `${label}: ended ${task?.status}`).toBe("WAITING_FOR_HUMAN");
      const withPerson = reviews.some((v) => v.taskId === r.taskId) || alerts.some((a) => a.taskId === r.taskId);
      expect(withPerson, `${label}: waiting for a person without an open review or alert`).toBe(true);
    }
  }
}

function summary(results: readonly TrialResult[], records: ProviderRecords): string {
  const count = (key: (r: TrialResult) => string) => {
    const n = new Map<string, number>();
    for (const r of results) n.set(key(r), (n.get(key(r)) ?? 0) + 1);
    return JSON.stringify(Object.fromEntries(n));
  };
  const ours = new Set(results.map((r) => r.taskId));
  return (
    `${results.length} trials, ${results.filter((r) => r.killed).length} workers killed by SIGKILL, ${records.refunds.filter((x) => ours.has(x.metadata.task_id ?? "")).length} refunds at the provider, ` +
    `final ${count((r) => r.finalStatus)}, first lives ${count((r) => r.firstLives.join("+"))}, kill points ${count((r) => `${r.killAt ?? "none"}/${r.killed ? "killed" : "survived"}`)}`
  );
}

describe("chaos: SIGKILL at every step boundary, with provider faults", () => {
  it(
    `${trials} trials, every kill point × fault set ${killRounds} times: no duplicate refund, nobody stuck, the consistency checker finds nothing`,
    { timeout: 1_500_000 },
    async () => {
      const started = performance.now();
      const results = await inLanes(trials, parallel, (i) => killTrial(i));
      const records = await allProviderRecords();
      await expectEveryTaskAtRest(results, records);
      await expectConsistent(results);
      console.log(
        `chaos: ${summary(results, records)}; ${pool.started} worker processes started; ${Math.round((performance.now() - started) / 1000)} s`,
      );
      // The test must actually have killed workers at each boundary, right after the irreversible call among them.
      for (const point of killPoints.filter((p) => p !== undefined))
        expect(results.filter((r) => r.killAt === point && r.killed).length, `workers killed ${point}`).toBeGreaterThan(
          0,
        );
    },
  );

  it(
    `${twinTrials} trials (every kill point × fault set) of two refund-bot processes on one task: one refund, COMPLETED or with a person, never FAILED with a refund`,
    { timeout: 600_000 },
    async () => {
      const started = performance.now();
      const results = await inLanes(twinTrials, Math.max(1, Math.floor(parallel / 2)), (i) => twinTrial(i));
      const records = await allProviderRecords();
      console.log(`chaos twins: ${summary(results, records)}; ${Math.round((performance.now() - started) / 1000)} s`);
      await expectEveryTaskAtRest(results, records);
      await expectConsistent(results);
    },
  );

  it(
    `${providerKillTrials} trials with the provider SIGKILLed mid-refund and restarted from its journal`,
    { timeout: 600_000 },
    async () => {
      const started = performance.now();
      const journals = mkdtempSync(path.join(tmpdir(), "verity-chaos-provider-"));
      try {
        for (let i = 0; i < providerLanes; i++) {
          const provider = new ProviderProcess(sandboxScript, path.join(journals, `journal-${i}.jsonl`));
          providers.push(provider);
          await provider.start();
        }
        const results = await inLanes(providerKillTrials, providerLanes, (i, lane) =>
          providerKillTrial(i, providers[lane] as ProviderProcess),
        );
        const records = await allProviderRecords();
        console.log(
          `chaos provider kills: ${summary(results, records)}; ${providers.reduce((n, p) => n + p.kills, 0)} provider kills; ${Math.round((performance.now() - started) / 1000)} s`,
        );
        await expectEveryTaskAtRest(results, records);
        await expectConsistent(results);
        // The kills must have hit refunds in flight, on both sides of the provider's commit: a
        // refund the restarted provider still had (found by the lookup), and one it never committed
        // (not found, sent again under the same key).
        const events = await database.db.executionEvent.findMany({
          where: { execution: { taskId: { in: results.map((r) => r.taskId) } } },
          select: { toStatus: true },
        });
        expect(providers.reduce((n, p) => n + p.kills, 0)).toBe(providerKillTrials);
        expect(
          results.filter((r) => r.firstLives[0] === "handed over (RECONCILING)").length,
          "first lives whose refund call the kill cut off",
        ).toBeGreaterThan(0);
        expect(
          events.filter((e) => e.toStatus === "RECONCILED_SUCCEEDED").length,
          "refunds committed before the kill, found after the restart",
        ).toBeGreaterThan(0);
        expect(
          events.filter((e) => e.toStatus === "RECONCILED_FAILED" || e.toStatus === "FAILED").length,
          "refunds the kill stopped before the commit",
        ).toBeGreaterThan(0);
      } finally {
        await Promise.all(providers.map((p) => p.stop()));
        rmSync(journals, { recursive: true, force: true });
      }
    },
  );
});
