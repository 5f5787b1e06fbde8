import { spawn } from "node:child_process";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import path from "node:path";
import {
  agentInvocationOf,
  deliveryInvocation,
  deviationsFromPlan,
  nextDemoStep,
  resumeInvocationOf,
  type AgentInvocation,
  type DemoRun,
} from "@/programs/demo/plan";
import { isVerityApiError, VerityClient } from "@/sdk";
import { DEMO_DELIVERY_RUN } from "@/programs/agent/delivery/plan";

/**
 * Carries out the demo plan (programs/demo/plan.ts) against a running server:
 * each run is a real `npm run agent` process, a killed one is resumed by a
 * new process, and unfinished tasks are resumed while the server's
 * reconciler settles what the agents left unknown — until every demo task
 * rests or the deadline passes. It only reads the server through the API
 * and never blocks it: scripts/start.ts runs this beside the console.
 */

export interface DemoRunnerOptions {
  verityUrl: string;
  sandboxUrl: string;
  /** The demo agent's token and identity (programs/seed/seed.ts). */
  token: string;
  identity: string;
  /** Where scripts/agent.ts is (the repository root). */
  root: string;
  /** The environment the agent processes start from. */
  env: NodeJS.ProcessEnv;
  /** Between resume rounds: the server's reconcile interval, so each round finds something new. */
  settleIntervalMs: number;
  /** Give up after this long (the tasks stay as they are, to resume by hand). */
  deadlineMs?: number;
  /** Agent processes at a time (a 2-core machine also serves the console). */
  concurrency?: number;
  signal?: AbortSignal;
  log: (line: string) => void;
}

export interface DemoResult {
  statuses: Map<string, string>;
  deviations: ReturnType<typeof deviationsFromPlan>;
  /** False when the deadline passed (or the runner was stopped) with tasks still moving. */
  finished: boolean;
  elapsedMs: number;
}

interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The agent's own summary line ("agent: 2 task(s): 2 completed"), or its last line. */
  summary: string;
}

const running = new Set<ReturnType<typeof spawn>>();

function runAgent(invocation: AgentInvocation, options: DemoRunnerOptions): Promise<AgentExit> {
  return new Promise((resolve, reject) => {
    // node itself (not npx): a SIGKILL at a fault point ends this child, not a wrapper around it.
    const child = spawn(process.execPath, ["--import", "tsx", path.join("scripts", "agent.ts"), ...invocation.args], {
      cwd: options.root,
      env: {
        ...options.env,
        VERITY_URL: options.verityUrl,
        VERITY_SANDBOX_URL: options.sandboxUrl,
        VERITY_TOKEN: options.token,
        VERITY_AGENT_IDENTITY: options.identity,
        ...invocation.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", (error) => {
      running.delete(child);
      reject(error);
    });
    child.on("exit", (code, signal) => {
      running.delete(child);
      const lines = out.trim().split("\n");
      const summary = lines.findLast((l) => /^agent: \d+ task\(s\)/.test(l)) ?? lines.at(-1) ?? "";
      resolve({ code, signal, summary: summary.replace(/^agent: /, "") });
    });
  });
}

/** Stops the agent processes this module started (scripts/start.ts on SIGINT/SIGTERM). */
export function stopDemoAgents(): void {
  for (const child of running) child.kill("SIGTERM");
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Resolves once the console answers /api/health (Next is ready and has run instrumentation). */
export async function waitUntilServing(verityUrl: string, signal?: AbortSignal): Promise<boolean> {
  while (!signal?.aborted) {
    const ok = await fetch(`${verityUrl}/api/health`, { signal: AbortSignal.timeout(5_000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return true;
    await sleep(500, signal);
  }
  return false;
}

async function readStatuses(client: VerityClient, runs: readonly DemoRun[]): Promise<Map<string, string>> {
  const ids = runs.flatMap((r) => r.taskIds);
  const statuses = new Map<string, string>();
  for (const id of ids) {
    try {
      statuses.set(id, (await client.getTask(id)).status);
    } catch (error) {
      if (!isVerityApiError(error, "not_found")) throw error;
      statuses.set(id, "missing");
    }
  }
  return statuses;
}

function describeExit(run: DemoRun, exit: AgentExit): string {
  if (exit.signal)
    return `worker ${exit.signal === "SIGKILL" && run.killAt ? `SIGKILLed at ${run.killAt}, as planned` : `ended by ${exit.signal}`}`;
  return exit.code === 0 ? exit.summary : `exit ${exit.code}: ${exit.summary}`;
}

async function inPool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(size, items.length)) }, worker));
}

export async function runDemoAgentRuns(runs: readonly DemoRun[], options: DemoRunnerOptions): Promise<DemoResult> {
  const started = Date.now();
  const deadline = started + (options.deadlineMs ?? 240_000);
  const { log, signal } = options;
  const client = new VerityClient({ baseUrl: options.verityUrl, token: options.token });

  await inPool(runs, options.concurrency ?? 3, async (run) => {
    if (signal?.aborted) return;
    const exit = await runAgent(agentInvocationOf(run), options);
    log(`${run.runId}: ${describeExit(run, exit)} — ${run.shows}`);
    if (run.killAt && exit.signal === "SIGKILL" && !signal?.aborted) {
      const resumed = await runAgent(resumeInvocationOf(run.runId), options);
      log(`${run.runId}: a new worker resumed it: ${describeExit(run, resumed)}`);
    }
  });

  if (!signal?.aborted) {
    const delivery = await runAgent(deliveryInvocation(), options);
    log(`${DEMO_DELIVERY_RUN}: ${delivery.summary} — the coding agent on the registered software-delivery workflow`);
  }

  let statuses = await readStatuses(client, runs);
  let finished = false;
  while (!signal?.aborted && Date.now() < deadline) {
    const step = nextDemoStep(statuses);
    if (step.kind === "done") {
      finished = true;
      break;
    }
    if (step.kind === "resume") {
      const resumed = await runAgent(resumeInvocationOf(), options);
      log(`resumed ${step.taskIds.length} unfinished task(s): ${resumed.summary}`);
    }
    const before = statuses;
    statuses = await readStatuses(client, runs);
    // Nothing moved: the server's reconciler (or the provider) has the next move.
    if ([...statuses].every(([id, status]) => before.get(id) === status)) await sleep(options.settleIntervalMs, signal);
  }
  const deviations = deviationsFromPlan(runs, statuses);
  return { statuses, deviations, finished, elapsedMs: Date.now() - started };
}

/** One line for the console log: how the demo tasks ended, and anything that did not go as planned. */
export function describeDemoResult(result: DemoResult): string {
  const counts = new Map<string, number>();
  for (const status of result.statuses.values()) counts.set(status, (counts.get(status) ?? 0) + 1);
  const ends = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  const when = `${Math.round(result.elapsedMs / 1000)} s`;
  if (!result.finished)
    return `stopped after ${when} with tasks still moving (${ends}); continue them with npm run agent -- --resume --run-id demo`;
  const off = result.deviations.map((d) => `${d.taskId} ${d.actual} (planned ${d.planned})`).join(", ");
  return `done in ${when}: ${ends}${off ? `; not as planned: ${off}` : ", as planned"}`;
}

/**
 * The marker in the data folder: written once the runs are done, naming the
 * seeded database they ran against (programs/seed/seed.ts seedMarkerOf: the id of the
 * demo token's row, new with every seeding). The runs are due on every start
 * of a demo database until it says "done" for that database, so a start
 * killed or stopped anywhere before (during seeding, before the console
 * answered, halfway through the runs) runs them again on the next start:
 * every run is idempotent, the agent continues its tasks from their last
 * commit. Nothing is ever skipped because some demo rows exist. A fresh
 * database under an old data folder (another DATABASE_URL, a deleted
 * pglite folder) gets a new seed id, hence its own runs.
 *
 * A marker from an earlier Verity ({"status":"done"} without a seed id) still
 * counts as done; one left "pending" by it is due.
 */
const MARKER = "demo-agent-runs.json";

export function isDemoDone(dataDir: string, seedId: string): boolean {
  const file = path.join(dataDir, MARKER);
  if (!existsSync(file)) return false;
  try {
    const marker = JSON.parse(readFileSync(file, "utf8")) as { status?: unknown; seed?: unknown };
    return marker.status === "done" && (marker.seed === undefined || marker.seed === seedId);
  } catch {
    // Unreadable (it is written by rename, so not a torn write): run them again, they are idempotent.
    return false;
  }
}

export function markDemoDone(dataDir: string, seedId: string, details: Record<string, unknown> = {}): void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, MARKER);
  const partial = `${file}.${process.pid}.partial`;
  // Written aside, flushed, then renamed over the marker: a kill leaves the old marker or the new one, never half of one.
  const fd = openSync(partial, "w");
  try {
    writeSync(
      fd,
      `${JSON.stringify({ status: "done", seed: seedId, at: new Date().toISOString(), ...details }, null, 2)}\n`,
    );
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(partial, file);
}
