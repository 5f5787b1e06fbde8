import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type DatabaseHandle } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";

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

async function adminQuery(text: string): Promise<void> {
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
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/**
 * Creates `verity_test_<random>` on the TEST_DATABASE_URL server, applies
 * prisma/migrations with the same engine and adapter the app uses, and
 * returns a client on it. Always call `drop()` (in afterAll / finally).
 */
export async function createPostgresTestDatabase(options: { poolSize?: number } = {}): Promise<PostgresTestDatabase> {
  const name = `verity_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = withDatabase(testDatabaseUrl(), name);
  let handle: DatabaseHandle | undefined;
  const drop = async () => {
    await handle?.close();
    // FORCE: a crashed worker process may still hold a connection.
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    handle = openDatabase({ kind: "postgres", url }, options);
    const applied = await migrateDatabase(handle.adapterFactory);
    if (applied.length === 0) throw new Error(`migrateDatabase applied no migration to the empty database ${name}`);
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
