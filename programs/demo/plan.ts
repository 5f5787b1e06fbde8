import { FaultChooser, orderOf, taskIdOf } from "@/programs/agent/order";
import type { FaultPoint } from "@/sdk/tool-protocol";
import { DEMO_DELIVERY_RUN } from "@/programs/agent/delivery/plan";

/**
 * What the first `npm start` of a demo database shows, as real runs of the
 * demo refund agent (`npm run agent`) against the real server and sandbox
 * provider: every refund, unknown outcome, reconciliation and frozen refund
 * in the console comes from one of these runs, none is written directly.
 *
 * Each run is one agent process. Its faults are the agent's own seeded
 * draws (programs/agent/order.ts FaultChooser), and the seed of each run is the
 * first one that draws exactly the faults listed here for its tasks, so the
 * demo is the same on every machine and every time.
 */

/** Where a demo task is left once the runs, the reconciler and the provider are done with it. */
export type DemoEnd = "COMPLETED" | "FAILED" | "WAITING_FOR_HUMAN";

export interface DemoTaskSpec {
  /** The fault each external call of the task's first run draws, in call order (refund, a retry of it, the customer note); null for none. */
  calls: ReadonlyArray<string | null>;
  ends: DemoEnd;
}

export interface DemoRunSpec {
  /** Order-id prefix, so the tasks are `refund-<runId>-<n>`. */
  runId: string;
  /** One line: what the run shows. */
  shows: string;
  amountCents: number;
  tasks: readonly DemoTaskSpec[];
  /** VERITY_FAULT_KILL_AT: the agent SIGKILLs itself there, and a new process resumes the run. */
  killAt?: FaultPoint;
  /** The provider's refund webhooks go to an endpoint that is down, so only the reconciler's lookup can tell. */
  webhooksLost?: boolean;
  /** Chance that a call draws a fault; the seed search finds the draws in `calls` whatever it is (default 0.5). */
  faultRate?: number;
}

export interface DemoRun extends DemoRunSpec {
  faults: string[];
  faultRate: number;
  seed: number;
  taskIds: string[];
}

/** Every demo run's order ids start with this, so `npm run agent -- --resume --run-id demo` continues them all. */
export const DEMO_RUN_PREFIX = "demo";

/** The provider gives up on this answer, and a lookup meanwhile says "still being processed". */
const PROVIDER_HOLDS_MS = 30_000;
/** How long the agent waits for a provider's answer before the outcome is unknown. */
export const DEMO_CALL_TIMEOUT_MS = 2_000;
/** The lease of a run that is killed on purpose: the resumed process waits this long, not the default 30 s. */
const KILLED_WORKER_LEASE_TTL_S = 3;
/** Port 9 (discard) on the loopback: connection refused, every delivery fails. */
const WEBHOOK_ENDPOINT_DOWN = "http://127.0.0.1:9/webhooks";

export const demoRunSpecs: readonly DemoRunSpec[] = [
  {
    runId: "demo-frozen",
    shows:
      "a refund above the four-eyes threshold the provider held 30 s and then declined: the reconciler asked while it was in flight, so it is frozen for two operators",
    amountCents: 75_000,
    tasks: [{ calls: [`latency=${PROVIDER_HOLDS_MS}+error_before_commit`], ends: "WAITING_FOR_HUMAN" }],
    faultRate: 1,
  },
  {
    runId: "demo-late",
    shows:
      "a refund the provider applied 30 s late: frozen while in flight, then its webhook brings the evidence to the review",
    amountCents: 18_000,
    tasks: [{ calls: [`latency=${PROVIDER_HOLDS_MS}`], ends: "WAITING_FOR_HUMAN" }],
    faultRate: 1,
  },
  {
    runId: "demo-killed",
    shows:
      "the worker SIGKILLed right after the refund call, before recording it, webhooks lost: a new process resumes, the reconciler finds the refund, no second one",
    amountCents: 8_900,
    tasks: [{ calls: [null], ends: "COMPLETED" }],
    killAt: "after_call",
    webhooksLost: true,
  },
  {
    runId: "demo-lost",
    shows:
      "answers lost (dropped refund answer, timed-out customer note), webhooks lost: the reconciler settles both from the provider's records",
    amountCents: 6_400,
    tasks: [
      { calls: ["drop_response"], ends: "COMPLETED" },
      { calls: [null, "timeout_after_commit"], ends: "COMPLETED" },
    ],
    webhooksLost: true,
  },
  {
    runId: "demo-webhook",
    shows: "the refund's answer never comes, its webhook arrives twice: settled by the provider's event, applied once",
    amountCents: 12_000,
    tasks: [{ calls: ["timeout_after_commit+duplicate_webhook", null], ends: "COMPLETED" }],
  },
  {
    runId: "demo-refused",
    shows:
      "refunds the provider refused (503, nothing stored): retried under the same key; one went through, one was refused again and, out of attempts, handed to a person",
    amountCents: 3_850,
    tasks: [
      { calls: ["error_before_commit", null, null], ends: "COMPLETED" },
      { calls: ["error_before_commit", "error_before_commit"], ends: "WAITING_FOR_HUMAN" },
    ],
  },
  {
    runId: "demo-ok",
    shows: "refunds without faults: refund, customer note, completed",
    amountCents: 2_499,
    tasks: [
      { calls: [null, null], ends: "COMPLETED" },
      { calls: [null, null], ends: "COMPLETED" },
      { calls: [null, null], ends: "COMPLETED" },
    ],
  },
];

/** The agent's task id of a demo run's n-th task (1-based), as the agent names it. */
export function demoTaskIdOf(runId: string, n: number, amountCents: number): string {
  return taskIdOf(orderOf(`${runId}-${n}`, amountCents, "usd"));
}

/** The fault values a spec's calls use, in first-use order. */
function faultsOf(spec: DemoRunSpec): string[] {
  return [...new Set(spec.tasks.flatMap((t) => t.calls).filter((f): f is string => f !== null))];
}

function drawsMatch(
  faults: string[],
  rate: number,
  seed: number,
  taskIds: string[],
  tasks: readonly DemoTaskSpec[],
): boolean {
  return tasks.every((task, i) => {
    const chooser = new FaultChooser(faults, rate, seed, taskIds[i]!);
    return task.calls.every((wanted) => (chooser.draw() ?? null) === wanted);
  });
}

const MAX_SEED_SEARCH = 1_000_000;

/** The smallest seed whose draws are exactly the spec's calls, for each of its tasks. */
export function findSeed(
  spec: DemoRunSpec,
  taskIds: string[],
  faults: string[],
  rate: number,
  limit = MAX_SEED_SEARCH,
): number {
  for (let seed = 0; seed < limit; seed++) if (drawsMatch(faults, rate, seed, taskIds, spec.tasks)) return seed;
  throw new Error(`no seed below ${limit} draws the faults demo run ${spec.runId} lists`);
}

export function planDemoRuns(specs: readonly DemoRunSpec[] = demoRunSpecs): DemoRun[] {
  return specs.map((spec) => {
    if (!spec.runId.startsWith(`${DEMO_RUN_PREFIX}-`))
      throw new Error(`demo run ${spec.runId} must start with "${DEMO_RUN_PREFIX}-"`);
    const taskIds = spec.tasks.map((_, i) => demoTaskIdOf(spec.runId, i + 1, spec.amountCents));
    const faults = faultsOf(spec);
    const faultRate = faults.length ? (spec.faultRate ?? 0.5) : 0;
    const seed = faults.length ? findSeed(spec, taskIds, faults, faultRate) : 0;
    return { ...spec, faults, faultRate, seed, taskIds };
  });
}

export interface AgentInvocation {
  args: string[];
  env: Record<string, string>;
}

/** `npm run agent -- <args>` with <env>: the demo run as the command line an engineer would type. */
export function agentInvocationOf(run: DemoRun): AgentInvocation {
  const args = [
    "--tasks",
    String(run.tasks.length),
    "--run-id",
    run.runId,
    "--amount-cents",
    String(run.amountCents),
    "--call-timeout-ms",
    String(DEMO_CALL_TIMEOUT_MS),
  ];
  if (run.faults.length)
    args.push("--faults", run.faults.join(","), "--fault-rate", String(run.faultRate), "--seed", String(run.seed));
  if (run.webhooksLost) args.push("--webhook-url", WEBHOOK_ENDPOINT_DOWN);
  // A worker that will be killed holds short leases: its successor waits for the dead one's lease to expire.
  if (run.killAt) args.push("--lease-ttl", String(KILLED_WORKER_LEASE_TTL_S));
  return { args, env: { VERITY_FAULT_KILL_AT: run.killAt ?? "" } };
}

/** Continues unfinished demo tasks (one run's, or all of them): what an engineer does after a crash. */
export function resumeInvocationOf(runId: string = DEMO_RUN_PREFIX): AgentInvocation {
  return {
    args: ["--resume", "--run-id", runId, "--call-timeout-ms", String(DEMO_CALL_TIMEOUT_MS)],
    env: { VERITY_FAULT_KILL_AT: "" },
  };
}

/**
 * The demo coding agent continuing the changes the seed left it: it releases
 * the one every person has approved (a real deploy, settled through its own
 * lookup worker) and finds the other two still waiting for people.
 */
export function deliveryInvocation(): AgentInvocation {
  return {
    args: ["--scenario", "delivery", "--resume", "--run-id", DEMO_DELIVERY_RUN, "--lease-wait-ms", "0"],
    env: { VERITY_FAULT_KILL_AT: "" },
  };
}

/** Statuses a demo task rests in: nothing more for an agent or the reconciler to do. */
const restingStatuses = new Set<string>([
  "COMPLETED",
  "FAILED",
  "PERMANENTLY_FAILED",
  "CANCELLED",
  "WAITING_FOR_HUMAN",
]);
/** Statuses `npm run agent -- --resume` picks a task up in (programs/agent/refund-agent.ts). */
const resumableStatuses = new Set<string>([
  "RECEIVED",
  "PLANNING",
  "READY",
  "RUNNING",
  "WAITING_FOR_TOOL",
  "VALIDATING",
]);

export type DemoProgress =
  { kind: "done" } | { kind: "resume"; taskIds: string[] } | { kind: "wait"; taskIds: string[] };

/**
 * What the demo does next, from where its tasks are: resume the ones an
 * agent can continue, wait while the server reconciles the others, or stop.
 */
export function nextDemoStep(statuses: ReadonlyMap<string, string>): DemoProgress {
  const unsettled = [...statuses].filter(([, status]) => !restingStatuses.has(status));
  if (unsettled.length === 0) return { kind: "done" };
  const resumable = unsettled.filter(([, status]) => resumableStatuses.has(status)).map(([id]) => id);
  if (resumable.length) return { kind: "resume", taskIds: resumable };
  return { kind: "wait", taskIds: unsettled.map(([id]) => id) };
}

/** The demo tasks that did not end where the plan says (an empty list when the demo went as planned). */
export function deviationsFromPlan(
  runs: readonly DemoRun[],
  statuses: ReadonlyMap<string, string>,
): Array<{ taskId: string; planned: DemoEnd; actual: string }> {
  return runs.flatMap((run) =>
    run.tasks
      .map((task, i) => ({
        taskId: run.taskIds[i]!,
        planned: task.ends,
        actual: statuses.get(run.taskIds[i]!) ?? "missing",
      }))
      .filter((d) => d.actual !== d.planned),
  );
}
