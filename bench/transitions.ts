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
 *
 * Why the sides differ is printed in the same run (issue 16): per
 * transition, each side's statements (round trips, counted on the client),
 * client and server CPU (the server's from /proc when it runs on this
 * machine), WAL bytes and records with the full-page images among them, by
 * table and index (pg_walinspect over the side's own slices, this database's
 * records only: the server is shared), and how many of its `tasks` updates
 * were HOT; then pg_stat_user_tables' HOT counts per level.
 */
import { existsSync, readFileSync } from "node:fs";
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
/** Issue 16: the engine at ≥ 80% of the baseline at every concurrency. */
const goal = 0.8;
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

/**
 * Statements sent, counted on the client: every query of the bench, the
 * engine (its pool and Prisma's adapter share this node-postgres) and the
 * baseline goes through pg.Client#query, one round trip each. Only the
 * measured sides send statements while a sample runs.
 */
let statementsSent = 0;
const sendQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
  statementsSent++;
  return sendQuery.apply(this, args);
} as typeof pg.Client.prototype.query;

/** What a side's transitions wrote, from PostgreSQL's WAL (pg_walinspect) and the client's statement count. */
interface Cost {
  transitions: number;
  statements: number;
  walBytes: number;
  /** Full-page images (the first change of a page after a checkpoint), part of walBytes. */
  fpiBytes: number;
  walRecords: number;
  /**
   * The transitions whose WAL was read: the WAL figures are per these. A
   * sample's WAL can be gone before it is read (other databases' writers on
   * a shared server fill segments and a checkpoint recycles them); that
   * sample then counts for throughput and statements but not for WAL.
   */
  walTransitions: number;
  /** Samples whose WAL was recycled before it was read. */
  walSamplesLost: number;
  /** WAL bytes by what they changed: a table, its indexes, its TOAST, or the commit record. */
  byPart: Map<string, number>;
  /** Updates of `tasks` rows, and how many of them were heap-only (HOT: no index entry written). */
  taskUpdates: number;
  taskHotUpdates: number;
  /** CPU time of this database's server processes while the side ran (/proc/<pid>/schedstat), when the server is on this machine. */
  serverCpuMicros: number | null;
}

const noCost = (): Cost => ({
  transitions: 0,
  statements: 0,
  walBytes: 0,
  fpiBytes: 0,
  walRecords: 0,
  walTransitions: 0,
  walSamplesLost: 0,
  byPart: new Map(),
  taskUpdates: 0,
  taskHotUpdates: 0,
  serverCpuMicros: null,
});

/**
 * CPU time so far of each server process connected to this database, in µs,
 * from /proc/<pid>/schedstat (nanosecond run time), or null when the server
 * runs elsewhere. The sides run one at a time, so the difference across a
 * sample is that side's server CPU (the listener's share of each
 * announcement included).
 */
async function serverCpu(meter: pg.Client): Promise<Map<number, number> | null> {
  const { rows } = await meter.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
  );
  const byPid = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      byPid.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1000);
    } catch {
      // Not on this machine (or gone already): a remote server is not measured at all.
      if (!existsSync(`/proc/${pid}`)) return null;
    }
  }
  return byPid;
}

function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let micros = 0;
  // A connection opened during the sample (a pool replacing an idle one) counts from its start.
  for (const [pid, used] of after) micros += used - (before.get(pid) ?? 0);
  return micros;
}

/**
 * The WAL records of this database between two LSNs, grouped by what they
 * changed: records naming a block of one of its relations, plus the records
 * without a block (the commits) of the transactions that wrote those. The
 * server is shared (other databases write WAL at the same time), so the
 * cluster-wide LSN difference alone would count their writes too.
 */
const walOfThisDatabase = `
  WITH r AS (
    SELECT xid, record_type, record_length, fpi_length, regexp_match(block_ref, 'rel \\d+/(\\d+)/(\\d+)') AS m
      FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
  here AS (SELECT * FROM r WHERE m[1]::oid = (SELECT oid FROM pg_database WHERE datname = current_database())),
  ours AS (
    SELECT xid, record_type, record_length, fpi_length, pg_filenode_relation(0, m[2]::oid) AS rel FROM here
    UNION ALL
    SELECT xid, record_type, record_length, fpi_length, NULL FROM r
     WHERE m IS NULL AND xid <> 0 AND xid IN (SELECT xid FROM here))
  SELECT CASE
           WHEN c.oid IS NULL THEN lower(o.record_type)
           WHEN c.relkind = 'i' AND t.relkind = 't' THEN coalesce((SELECT relname FROM pg_class WHERE reltoastrelid = t.oid), t.relname) || ' TOAST'
           WHEN c.relkind = 'i' THEN t.relname || ' indexes'
           WHEN c.relkind = 't' THEN coalesce((SELECT relname FROM pg_class WHERE reltoastrelid = c.oid), c.relname) || ' TOAST'
           ELSE c.relname
         END AS part,
         o.record_type, count(*)::int AS records, sum(o.record_length)::bigint AS bytes, sum(o.fpi_length)::bigint AS fpi
    FROM ours o
    LEFT JOIN pg_class c ON c.oid = o.rel
    LEFT JOIN pg_index i ON i.indexrelid = c.oid
    LEFT JOIN pg_class t ON t.oid = i.indrelid
   GROUP BY 1, 2`;

/**
 * Measures a sample's cost in the database: `meter` is the owner's own
 * connection (pg_walinspect reads WAL as a superuser or pg_read_server_files),
 * or null when the extension is not available: then only statements count.
 */
async function costOf(meter: pg.Client | null, cost: Cost, run: () => Promise<Sample>): Promise<Sample> {
  const lsn = async () =>
    (await meter!.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn")).rows[0]!.lsn;
  const from = meter ? await lsn() : null;
  const cpuBefore = meter ? await serverCpu(meter) : null;
  const sent = statementsSent;
  const sample = await run();
  cost.statements += statementsSent - sent;
  cost.transitions += sample.count;
  const cpuAfter = meter && cpuBefore ? await serverCpu(meter) : null;
  if (cpuBefore && cpuAfter) cost.serverCpuMicros = (cost.serverCpuMicros ?? 0) + cpuBetween(cpuBefore, cpuAfter);
  if (!meter || !from) return sample;
  // Every measured transaction committed synchronously, so its WAL is flushed by now.
  const to = (await meter.query<{ lsn: string }>("SELECT pg_current_wal_flush_lsn()::text AS lsn")).rows[0]!.lsn;
  type Part = { part: string; record_type: string; records: number; bytes: string; fpi: string };
  let rows: Part[];
  try {
    rows = (await meter.query<Part>(walOfThisDatabase, [from, to])).rows;
  } catch (error) {
    // 58P01: "requested WAL segment … has already been removed". Not this sample's fault: its WAL is not counted.
    if ((error as { code?: string }).code !== "58P01") throw error;
    cost.walSamplesLost++;
    return sample;
  }
  cost.walTransitions += sample.count;
  for (const row of rows) {
    const bytes = Number(row.bytes);
    cost.walBytes += bytes;
    cost.fpiBytes += Number(row.fpi);
    cost.walRecords += row.records;
    cost.byPart.set(row.part, (cost.byPart.get(row.part) ?? 0) + bytes);
    if (row.part === "tasks" && (row.record_type === "UPDATE" || row.record_type === "HOT_UPDATE")) {
      cost.taskUpdates += row.records;
      if (row.record_type === "HOT_UPDATE") cost.taskHotUpdates += row.records;
    }
  }
  return sample;
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
  costs: { engine: Cost; baseline: Cost; owner: Cost; quiet: Cost };
  /** pg_stat_user_tables over the whole level (set-up and warm-up included), every side together. */
  tableStats: TableStats[];
}

interface TableStats {
  relname: string;
  n_tup_upd: number;
  n_tup_hot_upd: number;
}

/** Updates and HOT updates of the tables a transition writes, as PostgreSQL's statistics count them. */
async function tableStats(meter: pg.Client): Promise<TableStats[]> {
  const { rows } = await meter.query<TableStats>(
    `SELECT relname, n_tup_upd::int AS n_tup_upd, n_tup_hot_upd::int AS n_tup_hot_upd FROM pg_stat_user_tables
      WHERE relname IN ('tasks', 'transitions', 'audit_entries', 'audit_streams') ORDER BY relname`,
  );
  return rows;
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
    // The owner's connection that reads the WAL and the statistics between samples.
    const probe = new pg.Client({ connectionString: target.url });
    probe.on("error", () => {});
    await probe.connect();
    const { rows: version } = await probe.query<{ server_version: string }>("SHOW server_version");
    let meter: pg.Client | null = probe;
    let walNote = "read with pg_walinspect, this database's records only";
    try {
      await probe.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
    } catch (error) {
      meter = null;
      walNote = `not measured (pg_walinspect: ${error instanceof Error ? error.message : String(error)})`;
    }
    console.log(`# bench:transitions  ${new Date().toISOString()}`);
    console.log(
      `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${version[0]?.server_version}`,
    );
    console.log(
      `# ${perLevel} measured transitions per side per level (+${warmup} warm-up), patch ${patchKind}, database ${target.name}`,
    );
    console.log(`# tracing: ${tracing ? `on, spans exported to ${configuredTracesUrl()}` : "off"}`);
    console.log(`# WAL per transition: ${walNote}`);
    // Other jobs on the machine move both columns; the ratio is what to compare.
    console.log(
      `# load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}\n`,
    );
    let statsBefore = await tableStats(probe);
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
        const costs = { engine: noCost(), baseline: noCost(), owner: noCost(), quiet: noCost() };
        const engineSlice = () => costOf(meter, costs.engine, () => drive(concurrency, slice, runEngine));
        const quietSlice = () => quietly(() => costOf(meter, costs.quiet, () => drive(concurrency, slice, runQuiet)));
        const baselineSlice = () => costOf(meter, costs.baseline, () => drive(concurrency, slice, runBaseline));
        const ownerSlice = () => costOf(meter, costs.owner, () => drive(concurrency, slice, runOwner));
        for (let round = 0; round < rounds; round++) {
          if (round % 2 === 0) {
            e = merge(e, await engineSlice());
            q = merge(q, await quietSlice());
            b = merge(b, await baselineSlice());
            o = merge(o, await ownerSlice());
          } else {
            o = merge(o, await ownerSlice());
            b = merge(b, await baselineSlice());
            q = merge(q, await quietSlice());
            e = merge(e, await engineSlice());
          }
        }
        rows.push({ concurrency, engine: e, baseline: b, owner: o, quiet: q, costs, tableStats: [] });
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
      // A backend flushes its table statistics when it ends: the level's pools are closed now.
      const after = await tableStats(probe);
      const row = rows.find((r) => r.concurrency === concurrency);
      if (row) row.tableStats = after.map((t) => subtractStats(t, statsBefore));
      statsBefore = after;
    }
    await probe.end();
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
    belowGoal ||= ratio < goal;
    console.log(
      `| ${row.concurrency} | ${e.perSecond.toFixed(0)} | ${e.p50.toFixed(2)} | ${e.p99.toFixed(2)} | ${b.perSecond.toFixed(0)} | ${b.p50.toFixed(2)} | ${b.p99.toFixed(2)} | ${(ratio * 100).toFixed(0)}% | ${e.cpuPerOp.toFixed(0)} / ${b.cpuPerOp.toFixed(0)} | ${o.perSecond.toFixed(0)} | ${((b.perSecond / o.perSecond) * 100).toFixed(0)}% | ${q.perSecond.toFixed(0)} | ${((e.perSecond / q.perSecond) * 100).toFixed(0)}% |`,
    );
  }
  printCauses(rows);
  console.log(
    `\n# total ${((performance.now() - started) / 1000).toFixed(1)} s, load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}` + (belowGoal ? `; BELOW the ${goal * 100}% goal at some level` : ""),
  );
}

function subtractStats(after: TableStats, before: TableStats[]): TableStats {
  const prior = before.find((t) => t.relname === after.relname);
  return {
    relname: after.relname,
    n_tup_upd: after.n_tup_upd - (prior?.n_tup_upd ?? 0),
    n_tup_hot_upd: after.n_tup_hot_upd - (prior?.n_tup_hot_upd ?? 0),
  };
}

const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(0)}%` : "–");

/**
 * Why the sides differ, per transition: statements (round trips), WAL bytes
 * and records, the share of `tasks` updates that were HOT, and the WAL by
 * what it changed, largest first.
 */
function printCauses(rows: Row[]): void {
  console.log(
    "\n| concurrency | side | client CPU µs/tx | server CPU µs/tx | statements/tx | WAL bytes/tx | of which full-page images | WAL records/tx | tasks updates HOT | WAL bytes/tx by table (largest first) |",
  );
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const row of rows) {
    for (const [side, cost, sample] of [
      ["engine", row.costs.engine, row.engine],
      ["baseline", row.costs.baseline, row.baseline],
      ["baseline as owner", row.costs.owner, row.owner],
      ["engine unannounced", row.costs.quiet, row.quiet],
    ] as const) {
      const per = (n: number) => (cost.transitions > 0 ? n / cost.transitions : Number.NaN);
      // WAL per the transitions whose WAL was read; "–" when none was.
      const perWal = (n: number, digits: number) =>
        cost.walTransitions > 0 ? (n / cost.walTransitions).toFixed(digits) : "–";
      const parts = [...cost.byPart.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([part, bytes]) => `${part} ${perWal(bytes, 0)}`)
        .join(", ");
      const lost = cost.walSamplesLost ? ` (WAL of ${cost.walSamplesLost} samples recycled before it was read)` : "";
      console.log(
        `| ${row.concurrency} | ${side} | ${summary(sample).cpuPerOp.toFixed(0)} | ${cost.serverCpuMicros === null ? "–" : per(cost.serverCpuMicros).toFixed(0)} | ${per(cost.statements).toFixed(2)} | ${perWal(cost.walBytes, 0)} | ${perWal(cost.fpiBytes, 0)} | ${perWal(cost.walRecords, 1)} | ${percent(cost.taskHotUpdates, cost.taskUpdates)} | ${parts || "–"}${lost} |`,
      );
    }
  }
  console.log("\n# pg_stat_user_tables per level (set-up, warm-up and every side together): HOT updates / updates");
  for (const row of rows) {
    console.log(
      `# concurrency ${row.concurrency}: ` +
        row.tableStats
          .map((t) => `${t.relname} ${t.n_tup_hot_upd} / ${t.n_tup_upd} (${percent(t.n_tup_hot_upd, t.n_tup_upd)})`)
          .join(", "),
    );
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
