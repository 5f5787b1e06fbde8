import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { expect } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Order } from "@/programs/agent/order";
import { bundledScript } from "@/tests/helpers/bundled-script";
import { orderSpecOf } from "./failover-agent";
import type { FailoverWorkerLine } from "./failover-refund-worker";

/**
 * What the failover tests share (failover.test.ts: a standby from a backup
 * plus shipped checkpoints; replication-failover.test.ts: a streaming
 * standby promoted): refund worker processes, the provider's own records,
 * and when a region's tasks are at rest.
 */

const workerSource = path.join(import.meta.dirname, "failover-refund-worker.ts");

/** Bundled once per test file (tests/helpers/bundled-script.ts): dependencies stay external, so the bundle runs the code under test. */
export function buildRefundWorker(): string {
  return bundledScript(workerSource, "failover-refund-worker");
}

export interface RefundWorker {
  child: ChildProcess;
  lines: FailoverWorkerLine[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export interface RefundWorkerOptions {
  script: string;
  sandboxUrl: string;
  seed: number;
  /** The sandbox's faults, one drawn per call (seeded per task). */
  faults: string[];
  /** Tasks each `run` worker drives at once; a `resume` worker takes all of its tasks at once. */
  concurrency: number;
  /** Worker processes `runWorkers` starts. */
  workers: number;
}

/** One refund worker process over `orders` on the database at `url` (tests/postgres/failover-refund-worker.ts). */
export function startRefundWorker(
  options: RefundWorkerOptions,
  url: string,
  mode: "run" | "resume",
  orders: Order[],
): RefundWorker {
  const concurrency = mode === "run" ? options.concurrency : orders.length;
  const child = spawn(process.execPath, [options.script], {
    env: {
      ...process.env,
      FAILOVER_DATABASE_URL: url,
      FAILOVER_SANDBOX_URL: options.sandboxUrl,
      FAILOVER_MODE: mode,
      FAILOVER_ORDERS: orderSpecOf(orders),
      FAILOVER_SEED: String(options.seed),
      FAILOVER_FAULTS: options.faults.join(","),
      FAILOVER_CONCURRENCY: String(concurrency),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: FailoverWorkerLine[] = [];
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d;
    for (let nl = stdout.indexOf("\n"); nl >= 0; nl = stdout.indexOf("\n")) {
      lines.push(JSON.parse(stdout.slice(0, nl)) as FailoverWorkerLine);
      stdout = stdout.slice(nl + 1);
    }
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, lines, exited };
}

/** Workers over `orders` on the database at `url`, to the end; a crash of a worker fails the test. */
export async function runRefundWorkers(
  options: RefundWorkerOptions,
  url: string,
  mode: "resume",
  orders: Order[],
): Promise<FailoverWorkerLine[]> {
  const workers = partition(orders, options.workers).map((slice) => startRefundWorker(options, url, mode, slice));
  for (const w of workers) {
    const { code, stderr } = await w.exited;
    expect(code, `a standby worker crashed: ${stderr.slice(-1500)}`).toBe(0);
  }
  return workers.flatMap((w) => w.lines);
}

export function partition<T>(items: T[], parts: number): T[][] {
  return Array.from({ length: parts }, (_, p) => items.filter((_, i) => i % parts === p)).filter(
    (slice) => slice.length > 0,
  );
}

export interface ProviderRefund {
  id: string;
  idempotency_key: string;
  metadata: { task_id?: string; execution_id?: string };
}

/** The sandbox provider's own list of refunds: the ground truth for duplicates. */
export async function providerRefunds(sandboxUrl: string): Promise<ProviderRefund[]> {
  return ((await (await fetch(`${sandboxUrl}/v1/refunds`)).json()) as { data: ProviderRefund[] }).data;
}

/** Polls until `done`, failing at once if a worker crashes or all of them end first. */
export async function waitUntil(done: () => Promise<boolean>, workers: RefundWorker[], what: string): Promise<void> {
  const ended: Array<{ code: number | null; stderr: string }> = [];
  for (const w of workers) void w.exited.then((e) => ended.push(e));
  while (!(await done())) {
    const crashed = ended.find((e) => e.code !== 0);
    if (crashed) throw new Error(`a primary worker crashed (exit ${crashed.code}): ${crashed.stderr.slice(-1500)}`);
    if (ended.length === workers.length) throw new Error(`the primary's workers ended before ${what}`);
    await sleep(20);
  }
}

const terminal = new Set(["COMPLETED", "CANCELLED", "PERMANENTLY_FAILED"]);

/** The tasks not at rest: neither terminal nor waiting for people with an open review. */
export async function notAtRest(db: Db, taskIds: string[]): Promise<string[]> {
  const tasks = await db.task.findMany({ where: { id: { in: taskIds } }, select: { id: true, status: true } });
  const open = new Set(
    (await db.review.findMany({ where: { taskId: { in: taskIds }, status: "OPEN" }, select: { taskId: true } })).map(
      (r) => r.taskId,
    ),
  );
  return tasks
    .filter((t) => !terminal.has(t.status) && !(t.status === "WAITING_FOR_HUMAN" && open.has(t.id)))
    .map((t) => t.id);
}

/** Per task, each committed version's commit time (its transition log), as one database holds it. */
export async function committedVersions(db: Db): Promise<Map<string, Map<number, Date>>> {
  const versions = new Map<string, Map<number, Date>>();
  for (const t of await db.transition.findMany({ select: { taskId: true, toVersion: true, createdAt: true } })) {
    if (!versions.has(t.taskId)) versions.set(t.taskId, new Map());
    versions.get(t.taskId)!.set(t.toVersion, t.createdAt);
  }
  return versions;
}

/** Each task's transition log holds every version from 1 to its current one, none missing. */
export async function expectGaplessTransitionLogs(db: Db, tasks: ReadonlyArray<{ id: string; version: number }>) {
  for (const task of tasks) {
    const versions = (
      await db.transition.findMany({
        where: { taskId: task.id },
        select: { toVersion: true },
        orderBy: { toVersion: "asc" },
      })
    ).map((t) => t.toVersion);
    expect(versions, `${task.id}: transition log has gaps`).toEqual(
      Array.from({ length: task.version }, (_, i) => i + 1),
    );
  }
}

export function count<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
