/**
 * lib/db/migrate.ts on a real PostgreSQL server, in process: Prisma's
 * bookkeeping both ways, the refusals, and the rows an earlier Verity
 * (which applied through Prisma's engine) left unfinished when it was
 * killed — for every migration in prisma/migrations, in both states the
 * engine's kill window can leave. The kills themselves are in
 * startup-kill.test.ts.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaPg } from "@prisma/adapter-pg";
import { MIGRATION_LOCK_KEY, migrateDatabase, MigrationError, readMigrations, type Migration } from "@/lib/db/migrate";
import { migrationOf } from "@/lib/db/migrations";
import { applyMigrationsWithPrismaEngine } from "@/lib/db/schema-engine";
import { createEmptyPostgresDatabase, snapshotDatabase } from "@/tests/startup/helpers";

const migrations = readMigrations();
let database: { url: string; drop(): Promise<void> };
const closers: Array<() => Promise<void>> = [];
let cleanSchema: unknown;
let schemas = 0;

/**
 * A scratch namespace: its own schema in one test database, reached through
 * a driver adapter bound to it (search_path, and the adapter's `schema` for
 * Prisma's engine). Schemas, not databases: dropping a database forces a
 * checkpoint, a second or more each on a busy machine.
 */
interface Scratch {
  adapterFactory: PrismaPg;
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Prisma's own applyMigrations, on a pool of its own that is closed after: the engine leaves its advisory lock on the connection it used. */
  engineApply(migrations?: readonly Migration[]): Promise<string[]>;
}

async function scratch(): Promise<Scratch> {
  const schema = `scratch_${++schemas}`;
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(database.url);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const pool = new pg.Pool({ connectionString: url.toString(), max: 3 });
  // An idle connection the server ends (other suites terminate backends) must not be an unhandled error.
  pool.on("error", () => {});
  closers.push(() => pool.end());
  return {
    adapterFactory: new PrismaPg(pool, { schema }),
    sql: async <T>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as T[],
    engineApply: async (list) => {
      const own = new pg.Pool({ connectionString: url.toString(), max: 2 });
      own.on("error", () => {});
      try {
        return await applyMigrationsWithPrismaEngine(new PrismaPg(own, { schema }), list);
      } finally {
        await own.end();
      }
    },
  };
}

const snapshotOf = async (db: Scratch) => (await snapshotDatabase(<T>(text: string) => db.sql<T>(text))).schema;

beforeAll(async () => {
  database = await createEmptyPostgresDatabase();
  const clean = await scratch();
  await migrateDatabase(clean.adapterFactory);
  cleanSchema = await snapshotOf(clean);
}, 60_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  await database?.drop();
});

const history = (db: Scratch) =>
  db.sql<{
    migration_name: string;
    checksum: string;
    logs: string | null;
    applied_steps_count: number;
    finished: boolean;
    rolled_back: boolean;
  }>(
    `SELECT migration_name, checksum, logs, applied_steps_count, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back
       FROM _prisma_migrations ORDER BY migration_name, rolled_back_at NULLS FIRST`,
  );

/** What Prisma's engine had written when it was killed mid-migration: started, never finished. */
async function insertUnfinishedRow(db: Scratch, m: Migration): Promise<void> {
  await db.sql(
    `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count) VALUES (gen_random_uuid()::text, $1, $2, now(), 0)`,
    [m.checksum, m.name],
  );
}

describe("migrateDatabase and Prisma's engine", () => {
  it("write the same _prisma_migrations (table and rows), and each applies nothing over the other's history", async () => {
    const [byEngine, byUs] = await Promise.all([scratch(), scratch()]);
    expect(await byEngine.engineApply()).toHaveLength(migrations.length);
    expect(await migrateDatabase(byUs.adapterFactory)).toHaveLength(migrations.length);
    const tableOf = (db: Scratch) =>
      db.sql(
        `SELECT column_name, data_type, character_maximum_length, is_nullable, column_default FROM information_schema.columns
          WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
    expect(await tableOf(byUs)).toEqual(await tableOf(byEngine));
    const keys = (db: Scratch) =>
      db.sql(
        `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = '_prisma_migrations'::regclass`,
      );
    expect(await keys(byUs)).toEqual(await keys(byEngine));
    expect(await history(byUs)).toEqual(await history(byEngine));
    expect((await history(byUs)).map((r) => r.checksum)).toEqual(migrations.map((m) => m.checksum));
    expect(await migrateDatabase(byEngine.adapterFactory)).toEqual([]);
    expect(await byUs.engineApply()).toEqual([]);
  });
});

describe("refusals", () => {
  it("refuses a migration changed after it was applied, before applying anything; a CRLF checkout of the same text is not a change", async () => {
    const db = await scratch();
    await migrateDatabase(db.adapterFactory, { migrations: migrations.slice(0, -1) });
    const edited = migrations.map((m, i) => (i === 0 ? migrationOf(m.name, `${m.script}\n-- edited\n`) : m));
    await expect(migrateDatabase(db.adapterFactory, { migrations: edited })).rejects.toThrow(
      /Migration \S+_init was changed after it was applied/,
    );
    expect((await history(db)).length).toBe(migrations.length - 1);
    const crlf = migrations.map((m) => migrationOf(m.name, m.script.replaceAll("\n", "\r\n")));
    expect(await migrateDatabase(db.adapterFactory, { migrations: crlf })).toEqual([migrations.at(-1)!.name]);
  });

  it("refuses a script with its own BEGIN/COMMIT before touching the database, and tables without a migration history", async () => {
    const db = await scratch();
    const withCommit = [migrationOf("20990101000000_own_commit", "BEGIN;\nCREATE TABLE x (id int);\nCOMMIT;\n")];
    await expect(migrateDatabase(db.adapterFactory, { migrations: withCommit })).rejects.toThrow(
      /own transaction control \(COMMIT\)|own transaction control \(BEGIN\)/,
    );
    expect(await db.sql("SELECT to_regclass('_prisma_migrations') AS t")).toEqual([{ t: null }]);
    await db.sql("CREATE TABLE unrelated (id int)");
    await expect(migrateDatabase(db.adapterFactory)).rejects.toThrow(MigrationError);
    await expect(migrateDatabase(db.adapterFactory)).rejects.toThrow(/1 table\(s\) but no _prisma_migrations history/);
  });

  it("waits while another process holds Prisma's migration lock, then applies", async () => {
    const db = await scratch();
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
      let waiting!: () => void;
      const isWaiting = new Promise<void>((resolve) => (waiting = resolve));
      let finished = false;
      const run = migrateDatabase(db.adapterFactory, {
        log: (line) => /waiting for another process's migration lock/.test(line) && waiting(),
      }).then((applied) => {
        finished = true;
        return applied;
      });
      await isWaiting;
      expect(finished).toBe(false);
      await holder.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
      expect(await run).toHaveLength(migrations.length);
    } finally {
      await holder.end();
    }
  });
});

describe("rows an earlier Verity left unfinished (Prisma's engine, killed mid-migration: P3009 on every start)", () => {
  it("each migration, killed before its script committed: applied now, the old row rolled back, as `migrate resolve --rolled-back` + deploy would leave it", async () => {
    for (const [k, m] of migrations.entries()) {
      const db = await scratch();
      await migrateDatabase(db.adapterFactory, { migrations: migrations.slice(0, k) });
      await insertUnfinishedRow(db, m);
      if (k === 0)
        await expect(db.engineApply(), "the engine itself refuses this database").rejects.toThrow(
          /P3009|failed migrations/,
        );
      expect(await migrateDatabase(db.adapterFactory), m.name).toEqual(migrations.slice(k).map((x) => x.name));
      const rows = (await history(db)).filter((r) => r.migration_name === m.name);
      expect(rows, m.name).toEqual([
        {
          migration_name: m.name,
          checksum: m.checksum,
          logs: null,
          applied_steps_count: 1,
          finished: true,
          rolled_back: false,
        },
        {
          migration_name: m.name,
          checksum: m.checksum,
          logs: null,
          applied_steps_count: 0,
          finished: false,
          rolled_back: true,
        },
      ]);
      expect(await snapshotOf(db), m.name).toEqual(cleanSchema);
      expect(await db.engineApply(), m.name).toEqual([]);
    }
  }, 120_000);

  it("each migration, killed after its script committed: recorded as applied and nothing run twice, as `migrate resolve --applied` would", async () => {
    for (const [k, m] of migrations.entries()) {
      const db = await scratch();
      await migrateDatabase(db.adapterFactory, { migrations: migrations.slice(0, k + 1) });
      await db.sql(
        `UPDATE _prisma_migrations SET finished_at = NULL, applied_steps_count = 0 WHERE migration_name = $1`,
        [m.name],
      );
      expect(await migrateDatabase(db.adapterFactory), m.name).toEqual(migrations.slice(k).map((x) => x.name));
      const rows = (await history(db)).filter((r) => r.migration_name === m.name);
      expect(rows, m.name).toEqual([
        {
          migration_name: m.name,
          checksum: m.checksum,
          logs: "",
          applied_steps_count: 0,
          finished: true,
          rolled_back: false,
        },
        {
          migration_name: m.name,
          checksum: m.checksum,
          logs: null,
          applied_steps_count: 0,
          finished: false,
          rolled_back: true,
        },
      ]);
      expect(await snapshotOf(db), m.name).toEqual(cleanSchema);
      expect(await db.engineApply(), m.name).toEqual([]);
    }
  }, 120_000);

  it("refuses to guess when the database holds only part of the unfinished migration, and changes nothing", async () => {
    const k = migrations.findIndex((m) => m.name.endsWith("_side_effects"));
    expect(k).toBeGreaterThan(0);
    const m = migrations[k]!;
    const db = await scratch();
    await migrateDatabase(db.adapterFactory, { migrations: migrations.slice(0, k) });
    await insertUnfinishedRow(db, m);
    // Not a state the engine's one-transaction script can leave: its second type exists, its first does not.
    await db.sql(`CREATE TYPE "ReviewStatus" AS ENUM ('OPEN')`);
    await expect(migrateDatabase(db.adapterFactory)).rejects.toThrow(
      new RegExp(
        `Migration ${m.name} was left unfinished .* cannot be told safely .*statement 1 .*CREATE TYPE "ExecutionStatus"`,
      ),
    );
    expect(await db.sql(`SELECT to_regtype('"ExecutionStatus"') AS t`)).toEqual([{ t: null }]);
    expect((await history(db)).filter((r) => r.migration_name === m.name)).toEqual([
      {
        migration_name: m.name,
        checksum: m.checksum,
        logs: null,
        applied_steps_count: 0,
        finished: false,
        rolled_back: false,
      },
    ]);
  });
});
