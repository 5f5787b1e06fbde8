/**
 * Transitions per second through the engine, next to a raw node-postgres
 * baseline doing the same writes in the same run.
 *
 *   npm run bench:transitions            # TEST_DATABASE_URL or local PostgreSQL
 *   BENCH_TRANSITIONS=4000 npm run bench:transitions
 *   BENCH_TRANSITION_PATCH=subtask_title npm run bench:transitions
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm run bench:transitions   # traced
 *
 * Each level runs `concurrency` workers, each on its own task (no CAS
 * conflicts: this measures the cost of a transition, not contention), doing
 * in-place updates that bump budget.hops_used (with
 * BENCH_TRANSITION_PATCH=subtask_title, each also renames a subtask: free
 * text, confidential, so encryption at rest seals it in the state and the
 * patch, which is what bench:encryption then measures). The engine side calls
 * transitionTask; the baseline does the minimum a correct CAS transition
 * needs: BEGIN; UPDATE … WHERE id AND version; INSERT the log row; COMMIT,
 * with the next state built in memory. Both use a pool of `concurrency`
 * connections. Engine and baseline alternate in two rounds so that drift on
 * a shared machine does not favour either.
 *
 * The engine and the baseline both run as the application does, as the
 * first tenant under row-level security (docs/tenants.md). A third side
 * runs the baseline's statements as the database's owner, whom the policies
 * do not hold (naming tenant_id itself): baseline under RLS over baseline as
 * owner is what row-level security costs a transition.
 *
 * A fourth side is the engine again with the change announcements off (the
 * tasks table's trigger disabled for its slices, docs/live-updates.md) while a
 * listener is connected, as a server's is: engine over engine-unannounced is
 * what announcing each change from its transaction costs a transition.
 */
import os from "node:os";
import pg from "pg";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { applyPatch, type TaskPatch, type TaskState } from "@/lib/model/tasks/task-state";
import { newId } from "@/lib/core/ids";
import { digestOf } from "@/lib/core/canonical-json";
import { DEFAULT_TENANT_ID, tenantConnectionOptions } from "@/lib/db/tenant-sessions";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";
import { configuredTracesUrl, startTracing, stopTracing } from "@/lib/config/tracing";

// As `npm start` runs it. Prisma reads this when a client is built: outside
// production it records a call site (new Error()) on every query for its
// error messages, ~7% of the engine's CPU per transition here.
Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const levels = (process.env.BENCH_CONCURRENCY ?? "1,4,16").split(",").map(Number);
const perLevel = Number(process.env.BENCH_TRANSITIONS ?? 3000);
const warmup = 200;
const rounds = 6;
const agent: Actor = { identity: "spiffe://verity.bench/agent/worker", kind: "agent" };
const patchKind = process.env.BENCH_TRANSITION_PATCH ?? "hops";
if (patchKind !== "hops" && patchKind !== "subtask_title")
  throw new Error(`BENCH_TRANSITION_PATCH is hops (the default) or subtask_title, not ${JSON.stringify(patchKind)}`);

/** The n-th transition's patch: the hop count, and with subtask_title a subtask's new title (a different text each time). */
function benchPatch(hops: number): TaskPatch {
  const budget = { hops_used: hops };
  if (patchKind === "hops") return { budget };
  return { budget, subtasks: [{ id: "bench-note", title: `Call the customer back about refund ${hops}` }] };
}

/**
 * A pool the bench opens itself: an idle connection the server closes (the
 * throwaway database dropped WITH (FORCE) at teardown) is an 'error' event,
 * which without a listener ends the process.
 */
function benchPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on("error", () => {});
  return pool;
}

interface Sample {
  count: number;
  seconds: number;
  latenciesMs: number[];
  /** CPU time of this process (user + system) while the sample ran. */
  cpuMicros: number;
}

const emptySample: Sample = { count: 0, seconds: 0, latenciesMs: [], cpuMicros: 0 };

function merge(a: Sample, b: Sample): Sample {
  return {
    count: a.count + b.count,
    seconds: a.seconds + b.seconds,
    latenciesMs: [...a.latenciesMs, ...b.latenciesMs],
    cpuMicros: a.cpuMicros + b.cpuMicros,
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs `total` operations spread over `workers` loops, timing each. */
async function drive(
  workers: number,
  total: number,
  op: (worker: number, i: number) => Promise<void>,
): Promise<Sample> {
  const latenciesMs: number[] = [];
  const perWorker = Math.ceil(total / workers);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) {
        const t0 = performance.now();
        await op(w, i);
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { count: perWorker * workers, seconds, latenciesMs, cpuMicros: used.user + used.system };
}

async function newRunningTasks(handle: DatabaseHandle, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { task } = await createTask(
      handle.db,
      {
        workflow: "agent-task",
        intent_id: "bench",
        budget: { currency_committed_usd: 100 },
        active_agents: [agent.identity],
      },
      agent,
    );
    let version = 1;
    for (const to of ["PLANNING", "READY", "RUNNING"]) {
      version = (await transitionTask(handle.db, task.id, { expected_version: version, to }, agent)).task.version;
    }
    ids.push(task.id);
  }
  return ids;
}

/** The engine: one transitionTask per operation, expected version from the previous result. */
function engineRunner(handle: DatabaseHandle, taskIds: string[]) {
  const versions = new Map<string, number>();
  const hops = new Map<string, number>();
  return async (worker: number) => {
    const taskId = taskIds[worker]!;
    const expected = versions.get(taskId) ?? (await handle.db.task.findFirstOrThrow({ where: { id: taskId } })).version;
    const nextHops = (hops.get(taskId) ?? 0) + 1;
    const result = await transitionTask(
      handle.db,
      taskId,
      { expected_version: expected, patch: benchPatch(nextHops) },
      agent,
    );
    versions.set(taskId, result.task.version);
    hops.set(taskId, nextHops);
  };
}

/** The baseline: the same rows written with hand-written SQL and no checks beyond the CAS. */
async function baselineRunner(pool: pg.Pool, taskIds: string[], asOwner = false) {
  const states = new Map<string, TaskState>();
  for (const id of taskIds) {
    const { rows } = await pool.query<{ state: TaskState }>("SELECT state FROM tasks WHERE id = $1", [id]);
    states.set(id, rows[0]!.state);
  }
  return async (worker: number) => {
    const taskId = taskIds[worker]!;
    const current = states.get(taskId)!;
    const patch = benchPatch(current.budget.hops_used + 1);
    const now = new Date();
    const next: TaskState = {
      ...applyPatch(current, patch),
      version: current.version + 1,
      updated_at: now.toISOString(),
      updated_by: agent.identity,
    };
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      // Named (prepared) statements, as the engine's hot path uses: the
      // baseline gets every advantage a hand-written client could take.
      const updated = await client.query({
        name: asOwner ? "baseline_update_owner" : "baseline_update",
        text: "UPDATE tasks SET state = $3, status = $4, version = version + 1, updated_at = $5, updated_by = $6 WHERE id = $1 AND version = $2",
        values: [taskId, current.version, JSON.stringify(next), next.status, now, agent.identity],
      });
      if (updated.rowCount !== 1) throw new Error(`baseline lost its CAS on ${taskId}`);
      await client.query({
        name: asOwner ? "baseline_insert_owner" : "baseline_insert",
        // The owner's connection has no tenant: it names the row's, which a tenant's connection defaults.
        text: `INSERT INTO transitions (id, task_id, from_version, to_version, from_status, to_status, actor, actor_kind, reason, patch, state_after, request_digest, created_at, tenant_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10, $11, $12, ${asOwner ? `'${DEFAULT_TENANT_ID}'` : "DEFAULT"})`,
        values: [
          newId("tr"),
          taskId,
          current.version,
          next.version,
          current.status,
          next.status,
          agent.identity,
          agent.kind,
          JSON.stringify(patch),
          JSON.stringify(next),
          digestOf(patch),
          now,
        ],
      });
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    } finally {
      client.release();
    }
    states.set(taskId, next);
  };
}

interface Row {
  concurrency: number;
  engine: Sample;
  baseline: Sample;
  /** The baseline's statements as the owner, not held by row-level security. */
  owner: Sample;
  /** The engine with the tasks table's change announcement disabled. */
  quiet: Sample;
}

function summary(s: Sample) {
  const sorted = [...s.latenciesMs].sort((a, b) => a - b);
  return {
    perSecond: s.count / s.seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    cpuPerOp: s.cpuMicros / s.count,
  };
}

async function main() {
  // OTEL_EXPORTER_OTLP_ENDPOINT set: every transition is traced and exported, as a server would (docs/observability.md).
  const tracing = await startTracing();
  const started = performance.now();
  const target = await createPostgresTestDatabase({ poolSize: 2 });
  const rows: Row[] = [];
  try {
    const probe = new pg.Client({ connectionString: target.url });
    await probe.connect();
    const { rows: version } = await probe.query<{ server_version: string }>("SHOW server_version");
    await probe.end();
    console.log(`# bench:transitions  ${new Date().toISOString()}`);
    console.log(
      `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${version[0]?.server_version}`,
    );
    console.log(
      `# ${perLevel} measured transitions per side per level (+${warmup} warm-up), patch ${patchKind}, database ${target.name}`,
    );
    console.log(`# tracing: ${tracing ? `on, spans exported to ${configuredTracesUrl()}` : "off"}`);
    // Other jobs on the machine move both columns; the ratio is what to compare.
    console.log(
      `# load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}\n`,
    );
    for (const concurrency of levels) {
      const engine = openDatabase({ kind: "postgres", url: target.url }, { poolSize: concurrency });
      const pool = benchPool({
        connectionString: target.url,
        max: concurrency,
        options: tenantConnectionOptions(DEFAULT_TENANT_ID),
      });
      const ownerPool = benchPool({ connectionString: target.url, max: concurrency });
      // A server's one listener, receiving every announcement the other sides make.
      const listener = new pg.Client({ connectionString: target.url });
      let heard = 0;
      listener.on("notification", () => heard++);
      listener.on("error", () => {});
      await listener.connect();
      await listener.query("LISTEN verity_changes");
      const quietly = async (run: () => Promise<Sample>): Promise<Sample> => {
        await ownerPool.query("ALTER TABLE tasks DISABLE TRIGGER verity_announce");
        try {
          return await run();
        } finally {
          await ownerPool.query("ALTER TABLE tasks ENABLE TRIGGER verity_announce");
        }
      };
      try {
        const engineTasks = await newRunningTasks(engine, concurrency);
        const baselineTasks = await newRunningTasks(engine, concurrency);
        const ownerTasks = await newRunningTasks(engine, concurrency);
        const quietTasks = await newRunningTasks(engine, concurrency);
        const runEngine = engineRunner(engine, engineTasks);
        const runQuiet = engineRunner(engine, quietTasks);
        const runBaseline = await baselineRunner(pool, baselineTasks);
        const runOwner = await baselineRunner(ownerPool, ownerTasks, true);
        await drive(concurrency, warmup, runEngine);
        await drive(concurrency, warmup, runBaseline);
        await drive(concurrency, warmup, runOwner);
        await quietly(() => drive(concurrency, warmup, runQuiet));
        // Short alternating rounds (E B, B E, E B, …): on a shared machine
        // load comes and goes, and each side must see the same mix of it.
        const slice = Math.ceil(perLevel / rounds);
        let e = emptySample;
        let b = emptySample;
        let o = emptySample;
        let q = emptySample;
        for (let round = 0; round < rounds; round++) {
          if (round % 2 === 0) {
            e = merge(e, await drive(concurrency, slice, runEngine));
            q = merge(q, await quietly(() => drive(concurrency, slice, runQuiet)));
            b = merge(b, await drive(concurrency, slice, runBaseline));
            o = merge(o, await drive(concurrency, slice, runOwner));
          } else {
            o = merge(o, await drive(concurrency, slice, runOwner));
            b = merge(b, await drive(concurrency, slice, runBaseline));
            q = merge(q, await quietly(() => drive(concurrency, slice, runQuiet)));
            e = merge(e, await drive(concurrency, slice, runEngine));
          }
        }
        rows.push({ concurrency, engine: e, baseline: b, owner: o, quiet: q });
        const es = summary(e);
        const bs = summary(b);
        const os_ = summary(o);
        const qs = summary(q);
        console.log(
          `concurrency ${concurrency}: engine ${es.perSecond.toFixed(0)}/s (${es.cpuPerOp.toFixed(0)} µs CPU each), baseline ${bs.perSecond.toFixed(0)}/s (${bs.cpuPerOp.toFixed(0)} µs CPU each), baseline as owner ${os_.perSecond.toFixed(0)}/s, engine unannounced ${qs.perSecond.toFixed(0)}/s (${heard} announcements heard)`,
        );
      } finally {
        await listener.end();
        await engine.close();
        await pool.end();
        await ownerPool.end();
      }
    }
  } finally {
    await target.drop();
    await stopTracing();
  }

  console.log(
    "\n| concurrency | engine tx/s | engine p50 ms | engine p99 ms | baseline tx/s | baseline p50 ms | baseline p99 ms | engine/baseline | client CPU µs/tx engine / baseline | baseline as owner tx/s | RLS: baseline / as owner | engine unannounced tx/s | announcing: engine / unannounced |",
  );
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  let belowGoal = false;
  for (const row of rows) {
    const e = summary(row.engine);
    const b = summary(row.baseline);
    const o = summary(row.owner);
    const q = summary(row.quiet);
    const ratio = e.perSecond / b.perSecond;
    belowGoal ||= ratio < 0.5;
    console.log(
      `| ${row.concurrency} | ${e.perSecond.toFixed(0)} | ${e.p50.toFixed(2)} | ${e.p99.toFixed(2)} | ${b.perSecond.toFixed(0)} | ${b.p50.toFixed(2)} | ${b.p99.toFixed(2)} | ${(ratio * 100).toFixed(0)}% | ${e.cpuPerOp.toFixed(0)} / ${b.cpuPerOp.toFixed(0)} | ${o.perSecond.toFixed(0)} | ${((b.perSecond / o.perSecond) * 100).toFixed(0)}% | ${q.perSecond.toFixed(0)} | ${((e.perSecond / q.perSecond) * 100).toFixed(0)}% |`,
    );
  }
  console.log(
    `\n# total ${((performance.now() - started) / 1000).toFixed(1)} s, load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}` + (belowGoal ? "; BELOW the 50% goal at some level" : ""),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
