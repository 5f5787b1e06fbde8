import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { builtInToolDefinitions } from "@/lib/model/tools/built-in-tools";
import { workflowDefinitions } from "@/lib/model/workflows";
import { migrationsDigest } from "./migrations-digest";

/**
 * Throwaway PostgreSQL databases for tests and benchmarks. Plain module (no
 * vitest import) so that bench/ and the worker processes of
 * tests/postgres/ can use it too.
 */
export const defaultTestDatabaseUrl = "postgresql://postgres@127.0.0.1:5432/postgres";

export function testDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || defaultTestDatabaseUrl;
}

export const startPostgresHint =
  "Start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` " +
  "(or point TEST_DATABASE_URL at a server where user may CREATE DATABASE).";

export interface PostgresTestDatabase extends DatabaseHandle {
  /** Connection URL of the throwaway database, for other processes. */
  url: string;
  name: string;
  /** Disconnects and drops the database. */
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminClient(): Promise<pg.Client> {
  const url = testDatabaseUrl();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // PostgreSQL tests must fail loudly, never skip: a skipped concurrency
    // test reads as a passed one in CI output.
    throw new Error(`PostgreSQL is not reachable at ${new URL(url).host} (${reason}). ${startPostgresHint}`);
  }
  return client;
}

/**
 * ANALYZE of a whole throwaway database, as its owner: what autovacuum
 * would have done by now on a database that had been running a while. A
 * benchmark's database is minutes old and its tables grew from nothing, so
 * PostgreSQL has no statistics yet, and a prepared statement's generic plan
 * chosen while a table was tiny (an execution looked up by id through the
 * tenant's index, reading every row of the tenant) stays until the next
 * ANALYZE. Benchmarks measure the steady state; docs/benchmarks.md says
 * where this mattered.
 */
export async function analyzeDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("ANALYZE");
  } finally {
    await client.end();
  }
}

async function adminQuery(text: string): Promise<void> {
  const client = await adminClient();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Test-only advisory lock key: one builder of a template at a time, across processes and worktrees. */
const TEMPLATE_LOCK_KEY = 7_461_802;

let migratedTemplate: Promise<string> | undefined;

/**
 * The name of a database holding every migration and the shipped workflows
 * and tools, built once per server, set of migrations and shipped
 * definitions (`verity_template_<digest>`, ./migrations-digest.ts), for
 * `CREATE DATABASE … TEMPLATE` to copy: a copy is a file copy on the server,
 * where migrating each test database ran every migration through the
 * applier (docs/architecture.md, "Where the suite's time goes"). Built under a new name and renamed when complete, under an
 * advisory lock, so a process that dies mid-build leaves no template that
 * looks finished, and two builders never race. Nothing stays connected to
 * it (a copy needs its template idle), and IS_TEMPLATE keeps a stray
 * `DROP DATABASE` off it. Templates of older migrations are left on the
 * server (a few MB each): another worktree's run may be copying one.
 */
function migratedTemplateName(): Promise<string> {
  migratedTemplate ??= buildMigratedTemplate().catch((error: unknown) => {
    migratedTemplate = undefined;
    throw error;
  });
  return migratedTemplate;
}

async function buildMigratedTemplate(): Promise<string> {
  // The shipped definitions are in the template too (registering them into an empty database was
  // seconds of each test database's setup), so they are part of its name.
  const shipped = JSON.stringify([workflowDefinitions.map((d) => d.digest), builtInToolDefinitions]);
  const name = `verity_template_${migrationsDigest(shipped)}`;
  const admin = await adminClient();
  const exists = async () => (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;
  try {
    if (await exists()) return name;
    await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
    try {
      if (await exists()) return name;
      const building = `verity_template_build_${randomBytes(6).toString("hex")}`;
      await admin.query(`CREATE DATABASE ${building}`);
      try {
        const handle = openDatabase(
          { kind: "postgres", url: withDatabase(testDatabaseUrl(), building) },
          { poolSize: 1 },
        );
        try {
          const applied = await migrateDatabase(handle.adapterFactory);
          if (applied.length === 0)
            throw new Error(`migrateDatabase applied no migration to the empty database ${building}`);
        } finally {
          await handle.close();
        }
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
        await admin.query(`ALTER DATABASE ${name} IS_TEMPLATE true`);
      } catch (error) {
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`).catch(() => {});
        throw error;
      }
      return name;
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    await admin.end();
  }
}

/**
 * Creates `verity_test_<random>` on the TEST_DATABASE_URL server as a copy
 * of the migrated template (every migration in prisma/migrations, applied
 * with the same engine and adapter the app uses), registers the shipped
 * workflows and tools as every start does, and returns a client on it.
 * Always call `drop()` (in afterAll / finally).
 */
export async function createPostgresTestDatabase(options: { poolSize?: number } = {}): Promise<PostgresTestDatabase> {
  const name = `verity_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${await migratedTemplateName()}`);
  const url = withDatabase(testDatabaseUrl(), name);
  let handle: DatabaseHandle | undefined;
  const drop = async () => {
    await handle?.close();
    // FORCE: a crashed worker process may still hold a connection.
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    handle = openDatabase({ kind: "postgres", url }, options);
    // Already in the template: each writes nothing then, but still refuses a shipped definition that
    // differs from the registered one under its version, as every start does.
    await registerBuiltInWorkflows(handle.db);
    await registerBuiltInTools(handle.db);
    return { ...handle, url, name, drop };
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
}

/** A new, empty `verity_test_<random>` database for a server process to migrate itself, and how to drop it. */
export async function createEmptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `verity_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  return {
    url: withDatabase(testDatabaseUrl(), name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
