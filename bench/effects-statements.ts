/**
 * What one ledger refund costs the database, counted on the client: every
 * statement node-postgres sends (pg.Client#query), per step, with the
 * commits among them, and each step's wall time and this process's CPU
 * (process.cpuUsage; the sandbox runs here, so the call's and the
 * confirmation lookup's provider side count too). The refunds are bench/effects.ts's (a built-in
 * irreversible refund, no lease, the sandbox in this process), after a
 * warm-up, one at a time.
 *
 *   npx tsx bench/effects-statements.ts            # 50 refunds, then the per-step mean
 *   BENCH_STATEMENTS_LOG=1 npx tsx bench/effects-statements.ts   # also the statements of the last refund
 *
 * It also prints the WAL the refunds wrote, by table and index (TOAST under
 * its table's name), read back with PostgreSQL's pg_walinspect: the rows and
 * index entries a refund costs the database, whatever their statements.
 * Without that extension (a server built without contrib) the table is left out.
 *
 * With `node --cpu-prof --import tsx bench/effects-statements.ts` (and
 * BENCH_EFFECTS=500) it is also the profile's workload.
 */
import pg from "pg";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { performEffect } from "@/lib/connectors/effects";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import type { Actor } from "@/lib/model/actor";
import { startSandbox } from "@/programs/sandbox/server";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? "production" });

const refunds = Number(process.env.BENCH_EFFECTS ?? 50);
const agent: Actor = { identity: "spiffe://verity.bench/agent/refunds", kind: "agent" };
const request = { amount_cents: 1000, currency: "usd", charge_id: "ch_bench", customer_id: "cus_bench" };

let step = "setup";

const counts = new Map<string, { statements: number; commits: number; prisma: number; roundTrips: number }>();
/** Wall time per step, in ms summed over the measured refunds. */
const stepMs = new Map<string, number>();
/** This process's CPU per step, in ms summed over the measured refunds. */
const stepCpuMs = new Map<string, number>();
let stepStart = performance.now();
let stepCpu = process.cpuUsage();
function enter(next: string) {
  const now = performance.now();
  const cpu = process.cpuUsage(stepCpu);
  stepMs.set(step, (stepMs.get(step) ?? 0) + now - stepStart);
  stepCpuMs.set(step, (stepCpuMs.get(step) ?? 0) + (cpu.user + cpu.system) / 1000);
  step = next;
  stepStart = now;
  stepCpu = process.cpuUsage();
}
const log: string[] = [];
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string; rowMode?: string };
  const text = typeof first === "string" ? first : (first?.text ?? "");
  // Prisma's pg adapter asks for rows as arrays; directQuery (lib/db/client.ts) does not.
  const viaPrisma = typeof first === "object" && first.rowMode === "array";
  const c = counts.get(step) ?? { statements: 0, commits: 0, prisma: 0, roundTrips: 0 };
  c.statements++;
  if (viaPrisma) c.prisma++;
  if (/^\s*COMMIT/i.test(text)) c.commits++;
  // A round trip begins with a statement asked for while none of this connection's is in flight;
  // the ones asked for meanwhile (pipeline mode, lib/db/client.ts inOrder) ride along.
  const inFlight = inFlightOn.get(this) ?? 0;
  if (inFlight === 0) c.roundTrips++;
  inFlightOn.set(this, inFlight + 1);
  const settled = () => inFlightOn.set(this, (inFlightOn.get(this) ?? 1) - 1);
  counts.set(step, c);
  if (process.env.BENCH_STATEMENTS_LOG)
    log.push(
      `${step}${viaPrisma ? " [prisma]" : ""}${inFlight ? " [pipelined]" : ""}: ${text.replace(/\s+/g, " ").slice(0, 160)}`,
    );
  const callback = args.at(-1);
  if (typeof callback === "function")
    args[args.length - 1] = (...results: unknown[]) => {
      settled();
      return (callback as (...r: unknown[]) => unknown)(...results);
    };
  const result = (query as (...a: unknown[]) => unknown).apply(this, args);
  if (result instanceof Promise) result.then(settled, settled);
  return result;
} as typeof pg.Client.prototype.query;
const inFlightOn = new WeakMap<pg.Client, number>();

const database = await createPostgresTestDatabase({ poolSize: 4 });
// The database's owner, for reading the WAL position and the WAL itself (printWalByRelation).
const owner = new pg.Client({ connectionString: database.url });
await owner.connect();
const sandbox = await startSandbox({ port: 0, host: "127.0.0.1" });
const deps = {
  payments: new SandboxPaymentConnector({ baseUrl: sandbox.url }),
  crm: new SandboxCrmConnector({ baseUrl: sandbox.url }),
};
const { db } = database;
try {
  const { task } = await createTask(db, { workflow: "agent-task", intent_id: "bench-statements" }, agent);
  let version = task.version;
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (await transitionTask(db, task.id, { expected_version: version, to }, agent)).task.version;
  const refund = async (n: number) => {
    enter("intent");
    const intent = await recordIntent(
      db,
      task.id,
      { tool_call_id: `refund-${n}`, tool: "payments.refund", request, expected_version: version, send: true },
      agent,
    );
    if (intent.kind !== "proceed") throw new Error("unexpected receipt");
    const execution = intent.execution;
    enter("call");
    const outcome = await performEffect(execution, deps);
    if (outcome.kind !== "succeeded") throw new Error(`refund ${outcome.kind}`);
    enter("outcome");
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
      deps,
    );
    version = done.task!.version;
    enter("idle");
  };
  for (let n = 0; n < 20; n++) await refund(-n - 1);
  counts.clear();
  stepMs.clear();
  stepCpuMs.clear();
  log.length = 0;
  const walFrom = await walPosition();
  const start = performance.now();
  for (let n = 0; n < refunds; n++) {
    if (n === refunds - 1) log.length = 0;
    await refund(n);
  }
  const ms = (performance.now() - start) / refunds;
  let total = 0;
  let commits = 0;
  let prisma = 0;
  let roundTrips = 0;
  console.log(`# ${refunds} refunds, one at a time: ${ms.toFixed(2)} ms each (${(1000 / ms).toFixed(0)}/s)`);
  console.log(
    "| step | ms per refund | this process's CPU ms | statements per refund | round trips | through Prisma | commits |\n|---|---:|---:|---:|---:|---:|---:|",
  );
  for (const name of ["intent", "call", "outcome"]) {
    const c = counts.get(name) ?? { statements: 0, commits: 0, prisma: 0, roundTrips: 0 };
    total += c.statements;
    roundTrips += c.roundTrips;
    commits += c.commits;
    prisma += c.prisma;
    const per = (n: number) => (n / refunds).toFixed(1);
    console.log(
      `| ${name} | ${((stepMs.get(name) ?? 0) / refunds).toFixed(2)} | ${((stepCpuMs.get(name) ?? 0) / refunds).toFixed(2)} | ${per(c.statements)} | ${per(c.roundTrips)} | ${per(c.prisma)} | ${per(c.commits)} |`,
    );
  }
  console.log(
    `| **total** | **${ms.toFixed(2)}** | **${([...stepCpuMs.entries()].filter(([k]) => k !== "idle").reduce((a, [, v]) => a + v, 0) / refunds).toFixed(2)}** | **${(total / refunds).toFixed(1)}** | **${(roundTrips / refunds).toFixed(1)}** | **${(prisma / refunds).toFixed(1)}** | **${(commits / refunds).toFixed(1)}** |`,
  );
  await printWalByRelation(walFrom, await walPosition());
  if (process.env.BENCH_STATEMENTS_LOG) console.log(`\n${log.join("\n")}`);
} finally {
  await owner.end();
  await sandbox.close();
  await database.drop();
}

async function walPosition(): Promise<string> {
  return (await owner.query<{ at: string }>("SELECT pg_current_wal_insert_lsn()::text AS at")).rows[0]!.at;
}

/**
 * The WAL between two positions, by relation of this database (a TOAST
 * table or its index under its table's name), and the records that name no
 * relation (commits, mostly) by kind. Records of other databases are left
 * out; the ones naming no relation cannot be told apart, so run it alone.
 */
async function printWalByRelation(from: string, to: string): Promise<void> {
  try {
    await owner.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect");
  } catch (error) {
    console.log(`\n(no WAL by relation: pg_walinspect is not available here: ${(error as Error).message})`);
    return;
  }
  const { rows: names } = await owner.query<{ node: string; name: string }>(`
    SELECT pg_relation_filenode(c.oid)::text AS node,
           coalesce(owner.relname || CASE WHEN c.relkind = 'i' THEN ' (TOAST index)' ELSE ' (TOAST)' END, c.relname) AS name
      FROM pg_class c
      LEFT JOIN pg_class owner ON owner.reltoastrelid = c.oid
                               OR owner.reltoastrelid = (SELECT indrelid FROM pg_index WHERE indexrelid = c.oid)
     WHERE pg_relation_filenode(c.oid) IS NOT NULL`);
  const nameOf = new Map(names.map((r) => [r.node, r.name]));
  const { rows: here } = await owner.query<{ oid: string }>(
    "SELECT oid::text FROM pg_database WHERE datname = current_database()",
  );
  const { rows } = await owner.query<{ rm: string; kind: string; bytes: number; fpi: number; blocks: string | null }>(
    `SELECT resource_manager AS rm, record_type AS kind, record_length AS bytes, fpi_length AS fpi, block_ref AS blocks
       FROM pg_get_wal_records_info($1, $2)`,
    [from, to],
  );
  const byName = new Map<string, { records: number; bytes: number; fpi: number }>();
  let bytes = 0;
  for (const r of rows) {
    const rel = /rel \d+\/(\d+)\/(\d+)/.exec(r.blocks ?? "");
    if (rel && rel[1] !== here[0]!.oid) continue;
    const name = rel ? (nameOf.get(rel[2]!) ?? `relation ${rel[2]}`) : `(${r.rm} ${r.kind})`;
    const entry = byName.get(name) ?? { records: 0, bytes: 0, fpi: 0 };
    entry.records++;
    entry.bytes += r.bytes;
    entry.fpi += r.fpi;
    byName.set(name, entry);
    bytes += r.bytes;
  }
  const per = (n: number) => n / refunds;
  console.log(
    `\n# WAL per refund: ${per(bytes).toFixed(0)} bytes in ${per([...byName.values()].reduce((a, e) => a + e.records, 0)).toFixed(1)} records\n`,
  );
  console.log(
    "| relation | bytes per refund | records per refund | of which full-page images, bytes |\n|---|---:|---:|---:|",
  );
  for (const [name, e] of [...byName].sort((a, b) => b[1].bytes - a[1].bytes))
    if (per(e.bytes) >= 1)
      console.log(`| ${name} | ${per(e.bytes).toFixed(0)} | ${per(e.records).toFixed(2)} | ${per(e.fpi).toFixed(0)} |`);
}
