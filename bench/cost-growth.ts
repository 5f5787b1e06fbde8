/**
 * Cost growth: does each read the console and the background loop make
 * cost its page or batch, or the whole table? (docs/cost-growth.md)
 *
 *   npm run bench:cost                                   # 2,000 and 20,000 tasks, 50 versions each
 *   BENCH_COST_SIZES=10000,100000,1000000 npm run bench:cost
 *   BENCH_COST_VERSIONS=50  BENCH_COST_REPEATS=7
 *
 * One throwaway database (the migrated template of tests/helpers/postgres.ts)
 * grows through the sizes: templates are made by the real write path, the
 * rest by bench/cost-loader.ts, whose rows are checked against the
 * templates' first (columns, nulls, JSON shape, ids, digests and chains).
 * At each size every operation is timed (median of the repeats after a
 * warm-up) through the product's own functions, and every SELECT it sent is
 * replayed under EXPLAIN (ANALYZE, BUFFERS) to count the buffers it touched
 * (tests/helpers/statement-plans.ts).
 * The table prints each size's time and buffers and their ratio to the
 * smallest size: bounded is ≈ 1×, growing with the total is ≈ the size ratio.
 * The database is dropped at the end, on failure too.
 */
import os from "node:os";
import pg from "pg";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import type { Principal } from "@/lib/model/permissions";
import { keysetCursor, keysetParts } from "@/lib/core/keyset-cursor";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { countTasks, listTasks, recentTasksWindow } from "@/lib/use-cases/tasks/list-tasks";
import { countTasksByStatus, listTransitions } from "@/lib/use-cases/tasks/task-queries";
import { foldTaskCountChanges } from "@/lib/stores/task-counts";
import { globalSearch } from "@/lib/use-cases/search/global-search";
import {
  countAuditEntries,
  listTaskHistory,
  searchAuditEntries,
  exportAuditSearch,
} from "@/lib/use-cases/audit/audit-search";
import { loadDashboard } from "@/lib/adapters/console/dashboard/dashboard";
import { gatherInbox } from "@/lib/use-cases/inbox/gather-inbox";
import { countAlerts, listAlerts } from "@/lib/use-cases/alerts/alert-queries";
import { raiseAlert } from "@/lib/use-cases/alerts/divergence";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { applyTaskRetention } from "@/lib/use-cases/retention/apply-task-retention";
import { placeLegalHold, releaseLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { verifyAuditStreams } from "@/lib/stores/audit-log";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { captureStatements, explainStatements } from "@/tests/helpers/statement-plans";
import { copyTemplates, loaderFunctionsSql, loadTaskRange } from "./cost-loader";

Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production", VERITY_LOG_LEVEL: "warn" });

const sizes = (process.env.BENCH_COST_SIZES ?? "2000,20000")
  .split(",")
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)
  .sort((a, b) => a - b);
const versionsPerTask = Number(process.env.BENCH_COST_VERSIONS ?? 50);
const repeats = Number(process.env.BENCH_COST_REPEATS ?? 7);
const chunkTasks = Number(process.env.BENCH_COST_CHUNK ?? 5_000);
/** One alert per this many tasks (open, like the template's). */
const alertEvery = 200;
if (sizes.length === 0) throw new Error("BENCH_COST_SIZES: a comma-separated list of task counts");
if (versionsPerTask < 8) throw new Error("BENCH_COST_VERSIONS: at least 8 (the templates' status moves)");

const agent: Actor = { identity: "spiffe://verity.bench/agent/cost", kind: "agent" };
const operator: Principal = {
  kind: "user",
  id: "usr_bench",
  identity: "user:bench-operator",
  role: "admin",
  displayName: "Bench",
  tenantId: "default",
  platformAdmin: false,
} as Principal;

// ---------------------------------------------------------------------------
// Buffers: every SELECT an operation sends, replayed under EXPLAIN (ANALYZE, BUFFERS).
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Measured {
  ms: number;
  buffers: number;
  statements: number;
}

async function measure(url: string, op: () => Promise<unknown>, times = repeats): Promise<Measured> {
  await op(); // warm: plans, shared buffers, compiled code
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await op();
    samples.push(performance.now() - t0);
  }
  const { sent } = await captureStatements(op);
  const explained = await explainStatements(url, sent);
  return {
    ms: median(samples),
    buffers: explained.reduce((n, e) => n + e.buffers, 0),
    statements: explained.length,
  };
}

// ---------------------------------------------------------------------------
// Templates through the real write path, and the loaded rows checked against them
// ---------------------------------------------------------------------------

interface Templates {
  finished: string;
  running: string;
  escalated: string;
  alert: string;
}

async function makeTemplates(db: Db): Promise<Templates> {
  const make = async (intent: string, middle: string[], end: string[]): Promise<string> => {
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: intent }, agent);
    let version = 1;
    const move = async (input: { to?: string; patch?: Record<string, unknown>; reason?: string }) => {
      version = (await transitionTask(db, task.id, { expected_version: version, ...input }, agent)).task.version;
    };
    for (const to of middle) await move({ to, reason: `bench: ${to.toLowerCase()}` });
    let hops = 0;
    while (version < versionsPerTask - end.length) await move({ patch: { budget: { hops_used: ++hops } } });
    for (const to of end) await move({ to, reason: `bench: ${to.toLowerCase()}` });
    return task.id;
  };
  const start = ["PLANNING", "READY", "RUNNING"];
  const finished = await make("template-finished", start, ["WAITING_FOR_TOOL", "VALIDATING", "COMPLETED"]);
  const running = await make("template-running", start, []);
  const escalated = await make("template-escalated", start, ["WAITING_FOR_HUMAN"]);
  const raised = await db.$transaction((tx) =>
    raiseAlert(
      tx,
      {
        taskId: running,
        kind: "stale_write",
        message: "bench: a divergence the monitor would raise",
        internal: { status: "RUNNING" },
        external: { status: "unknown" },
      },
      agent,
    ),
  );
  return { finished, running, escalated, alert: raised.alert.id };
}

/** Slots of task % 20: 14 finished, 5 running, 1 escalated to a person. */
async function fillSlots(client: pg.Client, t: Templates): Promise<void> {
  const values: string[] = [];
  for (let slot = 0; slot < 20; slot++) {
    const [kind, id] =
      slot === 0 ? ["escalated", t.escalated] : slot <= 5 ? ["running", t.running] : ["finished", t.finished];
    values.push(`(${slot}, '${id}', '${kind}')`);
  }
  await client.query(`INSERT INTO cost_slots (slot, task_id, kind) VALUES ${values.join(", ")}`);
}

/** The shape of a JSON value: its keys and their types, recursively (values left out). */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  return value === null ? "null" : typeof value;
}

/** What a row looks like apart from its values: columns, which are null, JSON shapes, id formats. */
function rowShape(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => {
        if (v === null) return [k, "null"];
        if (v instanceof Date) return [k, "timestamp"];
        if (typeof v === "object") return [k, shapeOf(v)];
        if (typeof v === "string" && /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/.test(v)) return [k, `id:${v.split("_")[0]}`];
        if (typeof v === "string" && /^[0-9a-f]{64}$/.test(v)) return [k, "sha256-hex"];
        return [k, typeof v];
      }),
  );
}

function sameShape(table: string, real: Record<string, unknown>[], loaded: Record<string, unknown>[]): string[] {
  const problems: string[] = [];
  if (real.length !== loaded.length) problems.push(`${table}: ${loaded.length} loaded rows, ${real.length} real ones`);
  for (let i = 0; i < Math.min(real.length, loaded.length); i++) {
    const a = JSON.stringify(rowShape(real[i]!));
    const b = JSON.stringify(rowShape(loaded[i]!));
    if (a !== b) problems.push(`${table} row ${i}: real ${a}\n   loaded ${b}`);
  }
  return problems;
}

/**
 * The loaded copy of each template against the template: same columns,
 * same nulls, same JSON shapes, ids of the same form, the state documents
 * equal but for the ids, intent and times; the loader's content digest
 * formula reproduces every real entry's stored digest; the loaded chains
 * verify with the product's verifier; the loaded task opens strictly.
 */
async function checkIdentity(db: Db, client: pg.Client, t: Templates, loadedIds: string[]): Promise<string[]> {
  const problems: string[] = [];
  const digests = await client.query<{ n: number; same: number }>(`
    SELECT count(*)::int AS n,
           count(*) FILTER (WHERE content_digest = cost_content_digest(id, stream, at, actor, actor_kind::text, action, subject_type,
                                                                      subject_id, task_id, details))::int AS same
      FROM audit_entries WHERE id NOT LIKE '%\\_zz%'`);
  const d = digests.rows[0]!;
  if (d.n === 0 || d.n !== d.same)
    problems.push(`the loader's content digest matches ${d.same} of ${d.n} entries written by the real path`);
  const pairs: Array<[string, string]> = [
    [t.escalated, loadedIds[0]!],
    [t.running, loadedIds[1]!],
    [t.finished, loadedIds[6]!],
  ];
  for (const [real, loaded] of pairs) {
    const q = async (sql: string, id: string) => (await client.query(sql, [id])).rows as Record<string, unknown>[];
    for (const [table, sql] of [
      ["tasks", "SELECT * FROM tasks WHERE id = $1"],
      ["transitions", "SELECT * FROM transitions WHERE task_id = $1 ORDER BY to_version"],
      ["audit_entries", "SELECT * FROM audit_entries WHERE stream = 'task:' || $1 ORDER BY seq"],
      ["audit_streams", "SELECT * FROM audit_streams WHERE stream = 'task:' || $1"],
    ] as const)
      problems.push(...sameShape(table, await q(sql, real), await q(sql, loaded)));
    const [a, b] = [await getTask(db, real, "strict"), await getTask(db, loaded, "strict")];
    if (!a || !b) problems.push(`${loaded}: the loaded task does not open`);
    else {
      const strip = (v: object) =>
        JSON.stringify(v, (k, x: unknown) =>
          ["task_id", "id", "intent_id", "intentId", "created_at", "updated_at", "createdAt", "updatedAt"].includes(k)
            ? undefined
            : x,
        );
      if (strip(a) !== strip(b)) problems.push(`${loaded}: its state differs from its template's beyond ids and times`);
    }
  }
  const verification = await verifyAuditStreams(
    db,
    pairs.map(([, loaded]) => `task:${loaded}`),
  );
  const broken = verification.breaks;
  if (broken.length > 0) problems.push(`loaded chains do not verify: ${JSON.stringify(broken).slice(0, 500)}`);
  return problems;
}

// ---------------------------------------------------------------------------
// The operations
// ---------------------------------------------------------------------------

const updatedCursor = keysetCursor([keysetParts.instant, keysetParts.text], { notOurs: "" });
const createdCursor = keysetCursor([z.literal("created"), keysetParts.instant, keysetParts.text], { notOurs: "" });

interface Operation {
  name: string;
  run: () => Promise<unknown>;
  /** Destructive (retention): timed once per repeat on fresh candidates, never warmed on the same rows. */
  once?: boolean;
  /** What the operation is measured under, set up before it and taken down after (neither timed nor replayed). */
  around?: { before: () => Promise<void>; after: () => Promise<void> };
}

/** A tenant-wide legal hold while the operation runs: every finished task is kept, so a retention run deletes nothing. */
function everythingHeld(db: Db): Operation["around"] {
  let hold: string | null = null;
  return {
    before: async () => {
      hold = (await placeLegalHold(db, { reason: "bench: every task kept" }, agent)).id;
    },
    after: async () => {
      if (hold) await releaseLegalHold(db, hold, "bench: done", agent);
      hold = null;
    },
  };
}

async function operationsAt(db: Db, client: pg.Client, size: number): Promise<Operation[]> {
  // A keyset page in the middle of the list, by each order.
  const mid = Math.floor(size / 2);
  const byUpdated = (
    await client.query<{ updated_at: Date; id: string }>(
      `SELECT updated_at, id FROM tasks ORDER BY updated_at DESC, id DESC OFFSET ${mid} LIMIT 1`,
    )
  ).rows[0]!;
  const byCreated = (
    await client.query<{ created_at: Date; id: string }>(
      `SELECT created_at, id FROM tasks ORDER BY created_at DESC, id DESC OFFSET ${mid} LIMIT 1`,
    )
  ).rows[0]!;
  const deepUpdated = updatedCursor.encode([byUpdated.updated_at, byUpdated.id]);
  const deepCreated = createdCursor.encode(["created", byCreated.created_at, byCreated.id]);
  const someTask = `task_zz${String(mid + 1).padStart(12, "0")}${"0".repeat(12)}`;
  const historyFirst = await listTaskHistory(db, someTask, { order: "desc", limit: 20 });
  let lastCursor = historyFirst.nextCursor;
  for (let page = historyFirst; page.nextCursor;) {
    lastCursor = page.nextCursor;
    page = await listTaskHistory(db, someTask, { order: "desc", limit: 20, cursor: page.nextCursor });
  }
  const retentionClock = () => Date.now() + 86_400_000 - 3_600_000; // cutoff: an hour ago
  return [
    { name: "tasks: first page, by update", run: () => listTasks(db, { limit: 50 }) },
    { name: "tasks: keyset page mid-list, by update", run: () => listTasks(db, { limit: 50, cursor: deepUpdated }) },
    { name: "tasks: first page, by creation", run: () => listTasks(db, { limit: 50, sort: "created" }) },
    {
      name: "tasks: keyset page mid-list, by creation",
      run: () => listTasks(db, { limit: 50, sort: "created", cursor: deepCreated }),
    },
    { name: "tasks: status RUNNING, first page", run: () => listTasks(db, { limit: 50, status: "RUNNING" }) },
    {
      name: "tasks: status RUNNING, oldest first",
      run: () => listTasks(db, { limit: 50, status: "RUNNING", order: "asc" }),
    },
    { name: "tasks: actor ILIKE, common", run: () => listTasks(db, { limit: 50, actor: "agent/cost" }) },
    { name: "tasks: actor ILIKE, no match", run: () => listTasks(db, { limit: 50, actor: "nobody-here" }) },
    {
      name: "tasks: actor ILIKE, no match, console (windowed)",
      run: async () => listTasks(db, { limit: 50, actor: "nobody-here" }, { window: await recentTasksWindow(db) }),
    },
    // Loaded ids are task_zz<12-digit n><12 zeros>, task 1 the newest: no id starts with task_none, and the
    // prefix of floor(size / 1000) - 1 followed by three digits names the oldest 1,000 (they were changed last longest ago).
    { name: "tasks: id prefix, no match", run: () => listTasks(db, { limit: 50, q: "task_none" }) },
    {
      name: "tasks: id prefix, the oldest 1,000",
      run: () => listTasks(db, { limit: 50, q: `task_zz${String(Math.floor(size / 1000) - 1).padStart(9, "0")}` }),
    },
    { name: "tasks: id prefix, every task", run: () => listTasks(db, { limit: 50, q: "task_zz" }) },
    {
      name: "tasks: id prefix, no match, console (windowed)",
      run: async () => listTasks(db, { limit: 50, q: "task_none" }, { window: await recentTasksWindow(db) }),
    },
    { name: "tasks: total (countTasks)", run: () => countTasks(db, {}) },
    { name: "tasks: total, status RUNNING", run: () => countTasks(db, { status: "RUNNING" }) },
    { name: "tasks: total, actor no match", run: () => countTasks(db, { actor: "nobody-here" }) },
    { name: "tasks: total, id prefix no match", run: () => countTasks(db, { q: "task_none" }) },
    { name: "tasks: counts strip (countTasksByStatus)", run: () => countTasksByStatus(db) },
    {
      name: "search: intent ILIKE, one match",
      run: () => globalSearch(db, operator, { q: `intent-${String(mid).padStart(9, "0")}` }),
    },
    { name: "search: intent ILIKE, no match", run: () => globalSearch(db, operator, { q: "no-such-intent" }) },
    { name: "task: transitions, first page", run: () => listTransitions(db, someTask, { limit: 20 }) },
    {
      name: "task: transitions, last page",
      run: () => listTransitions(db, someTask, { afterVersion: versionsPerTask - 20, limit: 20 }),
    },
    { name: "task: history, first page", run: () => listTaskHistory(db, someTask, { order: "desc", limit: 20 }) },
    {
      name: "task: history, last page",
      run: () =>
        listTaskHistory(db, someTask, { order: "desc", limit: 20, ...(lastCursor ? { cursor: lastCursor } : {}) }),
    },
    { name: "task: history count", run: () => countAuditEntries(db, { task: someTask, scope: "execution" }) },
    { name: "dashboard (loadDashboard)", run: () => loadDashboard(db) },
    { name: "inbox (gatherInbox, admin)", run: () => gatherInbox(db, operator) },
    { name: "alerts: first page", run: () => listAlerts(db, { limit: 50 }) },
    { name: "alerts: total open", run: () => countAlerts(db, { status: "OPEN" }) },
    {
      name: "audit: search, newest page",
      run: () => searchAuditEntries(db, { scope: "execution" }, { order: "desc", limit: 100 }),
    },
    {
      name: "audit: search, actor ILIKE",
      run: () => searchAuditEntries(db, { scope: "execution", actor: "cost" }, { order: "desc", limit: 100 }),
    },
    {
      name: "audit: export, first page",
      run: async () => {
        const reader = exportAuditSearch(db, { scope: "execution" }, "jsonl").getReader();
        await reader.read();
        await reader.cancel();
      },
    },
    { name: "monitor: one pass", run: () => runMonitorPass(db) },
    {
      name: "retention: one run (25 tasks)",
      once: true,
      run: () => applyTaskRetention(db, { olderThanDays: 1, maxTasks: 25 }, agent, { clock: retentionClock }),
    },
    {
      // Every task past the cutoff kept (a tenant-wide hold): what a run reads when nothing ahead of it can go.
      name: "retention: one run, every old task held",
      once: true,
      around: everythingHeld(db),
      run: () => applyTaskRetention(db, { olderThanDays: 1, maxTasks: 25 }, agent, { clock: retentionClock }),
    },
  ];
}

// ---------------------------------------------------------------------------

async function main() {
  let target: PostgresTestDatabase | undefined;
  let client: pg.Client | undefined;
  const results = new Map<string, Measured[]>();
  // Stopped by a signal (Ctrl-C, a timeout): the throwaway database is dropped all the same.
  const stop = (signal: NodeJS.Signals) => {
    console.error(`# ${signal}: dropping the bench database`);
    void Promise.resolve(client?.end())
      .catch(() => {})
      .then(() => target?.drop())
      .finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    target = await createPostgresTestDatabase({ poolSize: 4 });
    const db = target.db;
    client = new pg.Client({ connectionString: target.url });
    client.on("error", () => {});
    await client.connect();
    console.log(`# bench:cost  ${new Date().toISOString()}`);
    console.log(
      `# ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, Node ${process.version}; sizes ${sizes.join(", ")} tasks × ${versionsPerTask} versions; ${repeats} timed repeats (median)`,
    );
    console.log(
      `# load average at start: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}; database ${target.name}\n`,
    );

    await client.query(loaderFunctionsSql);
    const templates = await makeTemplates(db);
    await fillSlots(client, templates);
    await copyTemplates(client);
    const base = new Date();
    let loaded = 0;
    const load = async (to: number) => {
      const t0 = performance.now();
      for (let from = loaded + 1; from <= to; from += chunkTasks) {
        await loadTaskRange(client!, {
          from,
          to: Math.min(from + chunkTasks, to + 1),
          base,
          alertEvery,
          alertTemplate: templates.alert,
        });
        if ((from - 1) % (chunkTasks * 20) === 0 && from > 1)
          console.log(
            `#   … ${(from - 1).toLocaleString("en")} tasks (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
          );
      }
      loaded = to;
      // The background loop's fold, as a running server does it every tick.
      await foldTaskCountChanges(db);
      await client!.query("ANALYZE");
      return (performance.now() - t0) / 1000;
    };

    // The identity check on a first small load: three loaded tasks against their templates.
    const firstSize = sizes[0]!;
    const seconds = await load(Math.min(firstSize, 20));
    const loadedIds = Array.from(
      { length: 20 },
      (_, i) => `task_zz${String(i + 1).padStart(12, "0")}${"0".repeat(12)}`,
    );
    // Task n uses slot n % 20: reorder so that [0] is slot 0 (escalated), [1] slot 1 (running), [6] slot 6 (finished).
    const bySlot = Array.from({ length: 20 }, (_, slot) => loadedIds[(slot + 19) % 20]!);
    const problems = await checkIdentity(db, client, templates, bySlot);
    if (problems.length > 0) throw new Error(`loaded rows differ from the real path's:\n - ${problems.join("\n - ")}`);
    console.log(
      `# identity: loaded rows match the real path's (tasks, transitions, audit entries and stream heads: columns, nulls, JSON shapes, id forms; content digests reproduced; loaded chains verify) — ${seconds.toFixed(1)} s for 20 tasks\n`,
    );

    for (const size of sizes) {
      const s = await load(size);
      const rows = await client.query<{ relname: string; n: string; bytes: string }>(`
        SELECT relname, reltuples::bigint::text AS n, pg_size_pretty(pg_total_relation_size(oid)) AS bytes
          FROM pg_class WHERE relname IN ('tasks', 'transitions', 'audit_entries', 'divergence_alerts') ORDER BY relname`);
      console.log(
        `# ${size.toLocaleString("en")} tasks loaded (+${s.toFixed(0)} s): ${rows.rows.map((r) => `${r.relname} ${Number(r.n).toLocaleString("en")} rows ${r.bytes}`).join(", ")}`,
      );
      for (const op of await operationsAt(db, client, size)) {
        await op.around?.before();
        const m = await measure(target.url, op.run, op.once ? Math.max(3, Math.floor(repeats / 2)) : repeats).finally(
          () => op.around?.after(),
        );
        const list = results.get(op.name) ?? [];
        list.push(m);
        results.set(op.name, list);
      }
    }

    console.log(
      `\n| operation | ${sizes.map((n) => `${n.toLocaleString("en")}: ms / buffers`).join(" | ")} | × time, × buffers (largest / smallest) |`,
    );
    console.log(`|---|${sizes.map(() => "---:").join("|")}|---:|`);
    for (const [name, list] of results) {
      const first = list[0]!;
      const last = list[list.length - 1]!;
      const cells = list.map((m) => `${m.ms.toFixed(2)} / ${m.buffers.toLocaleString("en")}`);
      const ratio = `${(last.ms / first.ms).toFixed(1)}×, ${first.buffers > 0 ? (last.buffers / first.buffers).toFixed(1) : "–"}×`;
      console.log(`| ${name} | ${cells.join(" | ")} | ${ratio} |`);
    }
    console.log(`\n# size ratio largest / smallest: ${(sizes[sizes.length - 1]! / sizes[0]!).toFixed(0)}×`);
    console.log(
      `# load average at end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
  } finally {
    await client?.end().catch(() => {});
    await target?.drop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
