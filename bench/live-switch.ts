/**
 * npm run bench:live-switch: what the switch of the live announcements
 * (VERITY_LIVE_UPDATES, docs/live-updates.md) saves. The engine's in-place
 * transitions on PostgreSQL, three sides in the same run, in short
 * alternating rounds so a shared machine's load falls on each alike:
 *
 *   on        the switch on: every CAS's trigger calls pg_notify, and a
 *             server's listener is connected (the default);
 *   off       the switch off (live_announcements.enabled = false): the
 *             trigger still fires, reads the switch and returns;
 *   no trigger the tasks table's trigger disabled: no announcement code at
 *             all, the floor the switch should reach.
 *
 * off / no trigger near 100% says the switch removes the cost at the
 * database; on / no trigger is what announcing costs (bench:transitions
 * measures the same as "announcing: engine / unannounced").
 */
import os from "node:os";
import pg from "pg";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { applyLiveUpdatesSetting } from "@/lib/db/notifications";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

// As `npm start` runs it (Prisma records a call site per query outside production).
Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const levels = (process.env.BENCH_CONCURRENCY ?? "1,4,16").split(",").map(Number);
const perLevel = Number(process.env.BENCH_TRANSITIONS ?? 1800);
const rounds = 6;
const warmup = 100;
const agent: Actor = { identity: "spiffe://verity.bench/agent/switch", kind: "agent" };
const sides = ["on", "off", "no trigger"] as const;
type Side = (typeof sides)[number];

interface Sample {
  count: number;
  seconds: number;
  latenciesMs: number[];
}

async function drive(workers: number, total: number, op: (worker: number) => Promise<void>): Promise<Sample> {
  const latenciesMs: number[] = [];
  const perWorker = Math.ceil(total / workers);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        const t0 = performance.now();
        await op(w);
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  return { count: perWorker * workers, seconds: (performance.now() - started) / 1000, latenciesMs };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function runningTasks(handle: DatabaseHandle, n: number): Promise<Array<{ id: string; version: number }>> {
  const tasks = [];
  for (let i = 0; i < n; i++) {
    const { task } = await createTask(handle.db, { workflow: "agent-task", intent_id: "bench-switch" }, agent);
    let version = task.version;
    for (const to of ["PLANNING", "READY", "RUNNING"])
      version = (await transitionTask(handle.db, task.id, { expected_version: version, to }, agent)).task.version;
    tasks.push({ id: task.id, version });
  }
  return tasks;
}

async function main() {
  const target = await createPostgresTestDatabase({ poolSize: 2 });
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  console.log(`# bench:live-switch  ${new Date().toISOString()}`);
  console.log(`# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}`);
  console.log(
    `# ${perLevel} measured transitions per side per level in ${rounds} alternating rounds; load at start: ${load()}\n`,
  );
  const results: Array<{ concurrency: number } & Record<Side, Sample>> = [];
  const owner = new pg.Pool({ connectionString: target.url, max: 1 });
  owner.on("error", () => {});
  const listener = new pg.Client({ connectionString: target.url });
  listener.on("error", () => {});
  // Task announcements heard while each side ran (a straggler of the side before may land in the next).
  const heard: Record<Side, number> = { on: 0, off: 0, "no trigger": 0 };
  let running: Side = "on";
  listener.on("notification", (m) => {
    if (m.payload?.includes('"task"')) heard[running]++;
  });
  try {
    await listener.connect();
    await listener.query("LISTEN verity_changes");
    for (const concurrency of levels) {
      const engine = openDatabase({ kind: "postgres", url: target.url }, { poolSize: concurrency });
      try {
        const tasks = Object.fromEntries(
          await Promise.all(sides.map(async (s) => [s, await runningTasks(engine, concurrency)] as const)),
        ) as Record<Side, Array<{ id: string; version: number }>>;
        const run = async (side: Side, total: number): Promise<Sample> => {
          running = side;
          if (side === "off") await applyLiveUpdatesSetting(engine.platformDb, "off");
          if (side === "no trigger") await owner.query("ALTER TABLE tasks DISABLE TRIGGER verity_announce");
          try {
            return await drive(concurrency, total, async (w) => {
              const task = tasks[side][w]!;
              const result = await transitionTask(
                engine.db,
                task.id,
                { expected_version: task.version, patch: { budget: { hops_used: task.version } } },
                agent,
              );
              task.version = result.task.version;
            });
          } finally {
            if (side === "off") await applyLiveUpdatesSetting(engine.platformDb, "on");
            if (side === "no trigger") await owner.query("ALTER TABLE tasks ENABLE TRIGGER verity_announce");
          }
        };
        for (const side of sides) await run(side, warmup);
        const sum: Record<Side, Sample> = {
          on: { count: 0, seconds: 0, latenciesMs: [] },
          off: { count: 0, seconds: 0, latenciesMs: [] },
          "no trigger": { count: 0, seconds: 0, latenciesMs: [] },
        };
        const slice = Math.ceil(perLevel / rounds);
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? sides : [...sides].reverse();
          for (const side of order) {
            const s = await run(side, slice);
            sum[side] = {
              count: sum[side].count + s.count,
              seconds: sum[side].seconds + s.seconds,
              latenciesMs: [...sum[side].latenciesMs, ...s.latenciesMs],
            };
          }
        }
        results.push({ concurrency, ...sum });
        console.log(
          `concurrency ${concurrency}: ${sides.map((s) => `${s} ${(sum[s].count / sum[s].seconds).toFixed(0)}/s`).join(", ")} (task announcements heard so far: ${sides.map((s) => `${s} ${heard[s]}`).join(", ")})`,
        );
      } finally {
        await engine.close();
      }
    }
  } finally {
    await listener.end().catch(() => undefined);
    await owner.end();
    await target.drop();
  }
  console.log(
    "\n| concurrency | on tx/s | on p50 / p99 ms | off tx/s | off p50 / p99 ms | no trigger tx/s | no trigger p50 / p99 ms | on / no trigger | off / no trigger |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of results) {
    const rate = (s: Sample) => s.count / s.seconds;
    const lat = (s: Sample) =>
      `${percentile(s.latenciesMs, 50).toFixed(2)} / ${percentile(s.latenciesMs, 99).toFixed(2)}`;
    console.log(
      `| ${r.concurrency} | ${rate(r.on).toFixed(0)} | ${lat(r.on)} | ${rate(r.off).toFixed(0)} | ${lat(r.off)} | ${rate(r["no trigger"]).toFixed(0)} | ${lat(r["no trigger"])} | ${((rate(r.on) / rate(r["no trigger"])) * 100).toFixed(0)}% | ${((rate(r.off) / rate(r["no trigger"])) * 100).toFixed(0)}% |`,
    );
  }
  console.log(`\n# load average at end: ${load()}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
