/**
 * "Crash-safe from the first second" (issue 9) on PostgreSQL: the database
 * phase of `npm start` (tests/startup/worker.ts: migrateDatabase, then
 * ensureDemoData, as scripts/start.ts calls them) is SIGKILLed at named
 * points, inside a stalled seed transaction and at timed moments; the next
 * start must always succeed, and the database must end equal to one
 * migrated and seeded without interruption: same schema, same
 * `_prisma_migrations`, same demo rows (tests/startup/helpers.ts
 * snapshotDatabase).
 *
 * On the code before issue 9 (Prisma's engine applying, "users exist" as
 * the seed marker) the first test fails at its first migration kill (every
 * later start exits with P3009) and the seed kills end with a database that
 * lacks the demo token or tasks.
 */
import { cpSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { migrateDatabase, migrationsDir, readMigrations } from "@/lib/db/migrate";
import { applyMigrationsWithPrismaEngine } from "@/lib/db/schema-engine";
import { ensureDemoData } from "@/programs/seed/seed";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";
import {
  createEmptyPostgresDatabase,
  expectSeedUsable,
  killAtEachPoint,
  queryOf,
  snapshotDatabase,
  startCleanly,
  startWorker,
} from "@/tests/startup/helpers";

const migrations = readMigrations();
const last = migrations.at(-1)!.name;
/** Seed points spread over the seed: after the users and first token, inside a task's steps late in the extra tasks, after the marker. */
const seedPoints = ["seed:token:observer", "seed:task:demo-refund-order-1004-17:v3", "seed:done"];

let reference: Record<string, unknown>;
const dropLater: Array<() => Promise<void>> = [];

async function snapshotOf(url: string, options: { usable?: boolean } = {}): Promise<Record<string, unknown>> {
  const handle = openDatabase({ kind: "postgres", url }, { poolSize: 2 });
  try {
    if (options.usable) await expectSeedUsable(handle.db, queryOf(handle.db));
    return await snapshotDatabase(queryOf(handle.platformDb));
  } finally {
    await handle.close();
  }
}

beforeAll(async () => {
  // The database a start that was never interrupted leaves.
  const clean = await createPostgresTestDatabase({ poolSize: 2 });
  dropLater.push(clean.drop);
  await ensureDemoData(clean, { extraTasks: 40 });
  reference = await snapshotOf(clean.url);
}, 120_000);

afterAll(async () => {
  for (const drop of dropLater) await drop().catch(() => {});
});

async function emptyDatabase() {
  const db = await createEmptyPostgresDatabase();
  dropLater.push(db.drop);
  return db;
}

describe("a start killed at any point on PostgreSQL", () => {
  it("first start: killed inside every migration (holding the migration lock, its transaction open) and through the seed; the next start always succeeds and the end equals a clean start", async () => {
    const db = await emptyDatabase();
    const points = [...migrations.map((m) => `migrate:inside:${m.name}`), ...seedPoints];
    // Killed after the marker committed: the last start has nothing left to do.
    expect(await killAtEachPoint(db.spec, points)).toEqual({ applied: [], seededNow: false });
    expect(await snapshotOf(db.url, { usable: true })).toEqual(reference);
  }, 180_000);

  it("upgrade start: the first migrations applied by Prisma's engine (an earlier Verity), the start killed inside each remaining one", async () => {
    const db = await emptyDatabase();
    const kept = Math.max(1, migrations.length - 2);
    const handle = openDatabase({ kind: "postgres", url: db.url }, { poolSize: 2 });
    try {
      expect(await applyMigrationsWithPrismaEngine(handle.adapterFactory, migrations.slice(0, kept))).toHaveLength(
        kept,
      );
    } finally {
      await handle.close();
    }
    const points = migrations.slice(kept).map((m) => `migrate:inside:${m.name}`);
    const { applied } = await killAtEachPoint(db.spec, points, { VERITY_TEST_SEED: "0" });
    // The last kill lost the last migration: the final start applies exactly that one.
    expect(applied).toEqual([last]);
    const { schema, history } = await snapshotOf(db.url);
    expect({ schema, history }).toEqual({ schema: reference.schema, history: reference.history });
  }, 120_000);

  it("killed inside a seed transaction (createTask's, its task row written, stalled on a lock): nothing of it survives and the next start completes the seed", async () => {
    const db = await emptyDatabase();
    const migrated = openDatabase({ kind: "postgres", url: db.url }, { poolSize: 2 });
    await migrateDatabase(migrated.adapterFactory);
    await migrated.close();
    // A session of the test's own holds the transition log against writers
    // (reads still pass): the first task's transaction stalls on its
    // creation transition, after its task row. Not the audit chain heads:
    // the seed's token issues write audit entries before any task does.
    const blocker = new pg.Client({ connectionString: db.url });
    const observer = new pg.Client({ connectionString: db.url });
    await Promise.all([blocker.connect(), observer.connect()]);
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE transitions IN EXCLUSIVE MODE");
    const blockerPid = (await blocker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const worker = startWorker(db.spec);
    try {
      const stalled = await waitForBackendBehind(observer, blockerPid);
      expect(stalled.query).toMatch(/INSERT INTO "?(public"?\.)?"?transitions/);
      // Its transaction has written the task (uncommitted, so invisible here).
      const written = await observer.query<{ rel: string }>(
        "SELECT relation::regclass::text AS rel FROM pg_locks WHERE pid = $1 AND mode = 'RowExclusiveLock' ORDER BY 1",
        [stalled.pid],
      );
      expect(written.rows.map((r) => r.rel)).toEqual(expect.arrayContaining(["tasks"]));
      expect((await observer.query("SELECT id FROM tasks")).rows).toEqual([]);
      worker.kill();
      expect((await worker.exited).signal).toBe("SIGKILL");
    } finally {
      await blocker.query("ROLLBACK");
      await Promise.all([blocker.end(), observer.end()]);
    }
    expect((await startCleanly(db.spec)).seededNow).toBe(true);
    expect(await snapshotOf(db.url, { usable: true })).toEqual(reference);
  }, 120_000);

  it("timed kills at moments through a first start, each measured from its first fault point, then a clean start", async () => {
    const db = await emptyDatabase();
    const landed: string[] = [];
    for (const delayMs of [60, 1_200]) {
      const worker = startWorker(db.spec, { VERITY_TEST_TRACE: "1" });
      await worker.waitForLine(/^point /);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      worker.kill();
      const exit = await worker.exited;
      landed.push(
        `${delayMs} ms: ${exit.signal ?? `exit ${exit.code}`} after ${exit.lines.filter((l) => l.startsWith("point ")).at(-1) ?? "no point"}`,
      );
      // A start that finished before the kill is a wasted shot, not a failure; one that failed is a failure.
      expect(exit.code === 0 || exit.signal === "SIGKILL", exit.out).toBe(true);
    }
    console.log(`timed kills on PostgreSQL:\n  ${landed.join("\n  ")}`);
    await startCleanly(db.spec);
    expect(await snapshotOf(db.url, { usable: true })).toEqual(reference);
  }, 120_000);

  it("two starts at once on an empty database: one migrates and seeds, the other waits for its locks and finds everything done", async () => {
    const db = await emptyDatabase();
    const [a, b] = await Promise.all([startCleanly(db.spec), startCleanly(db.spec)]);
    expect([a.applied.length, b.applied.length].sort((x, y) => x - y)).toEqual([0, migrations.length]);
    expect([a.seededNow, b.seededNow].sort()).toEqual([false, true]);
    expect(await snapshotOf(db.url)).toEqual(reference);
  }, 120_000);

  it("a non-transactional migration (CREATE INDEX CONCURRENTLY) killed between its statements runs whole again and is recorded once", async () => {
    const db = await emptyDatabase();
    const dir = mkdtempSync(path.join(os.tmpdir(), "verity-migrations-"));
    try {
      cpSync(migrationsDir, dir, { recursive: true });
      const name = "99990101000000_concurrent_index";
      mkdirSync(path.join(dir, name));
      writeFileSync(
        path.join(dir, name, "migration.sql"),
        [
          "-- verity: non-transactional",
          "-- Idempotent: an interrupted CONCURRENTLY build leaves an invalid index, which the DROP removes.",
          'DROP INDEX CONCURRENTLY IF EXISTS "tasks_intent_id_probe_idx";',
          'CREATE INDEX CONCURRENTLY "tasks_intent_id_probe_idx" ON "tasks"("intent_id");',
          "",
        ].join("\n"),
      );
      const env = { VERITY_TEST_MIGRATIONS_DIR: dir, VERITY_TEST_SEED: "0" };
      const { applied } = await killAtEachPoint(
        db.spec,
        [`migrate:statement:${name}:1`, `migrate:statement:${name}:2`],
        env,
      );
      expect(applied).toEqual([name]);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const index = await client.query(
          "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'tasks_intent_id_probe_idx'",
        );
        expect(index.rows).toEqual([{ indisvalid: true }]);
        const rows = await client.query(
          "SELECT applied_steps_count, finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE migration_name = $1",
          [name],
        );
        expect(rows.rows).toEqual([{ applied_steps_count: 1, finished: true }]);
      } finally {
        await client.end();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * The backend waiting on `blockerPid`'s lock (polled: PostgreSQL has no event
 * for "started waiting"). `observer` must not be in a transaction: it would
 * see one snapshot of pg_stat_activity throughout.
 */
async function waitForBackendBehind(observer: pg.Client, blockerPid: number): Promise<{ pid: number; query: string }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows } = await observer.query<{ pid: number; query: string }>(
      "SELECT pid, query FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
      [blockerPid],
    );
    if (rows[0]) return rows[0];
    if (Date.now() > deadline) throw new Error("no seed write stalled behind the lock within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
