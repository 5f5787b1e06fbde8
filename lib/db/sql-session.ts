import type { PGlite } from "@electric-sql/pglite";
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type pg from "pg";

/**
 * One database connection, held for a while: what an advisory lock and a
 * migration's transaction need (a pool would hand each statement to any of
 * its connections). Built from the driver adapter factory that lib/db/client.ts
 * made, so it reaches the same server (node-postgres) or the same embedded
 * instance (PGlite, whose single connection Prisma shares: run nothing
 * through Prisma while a session has a transaction open).
 */
export interface SqlSession {
  readonly backend: "postgres" | "pglite";
  /** One statement, with $1… parameters (extended protocol). */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** A script of any number of statements, sent whole as one simple-protocol message. */
  exec(script: string): Promise<void>;
  close(): Promise<void>;
}

/** A PostgreSQL error's SQLSTATE (node-postgres and PGlite both put it in `code`). */
export function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export async function openSqlSession(factory: SqlMigrationAwareDriverAdapterFactory): Promise<SqlSession> {
  const adapter = await factory.connect();
  if (factory.adapterName === "@prisma/adapter-pg") return openPgSession(adapter);
  // pglite-prisma-adapter keeps its PGlite instance as `client` and has no accessor for it.
  const pglite = (adapter as unknown as { client?: PGlite }).client;
  if (!pglite || typeof pglite.exec !== "function")
    throw new Error(`openSqlSession: unsupported driver adapter ${factory.adapterName}`);
  return {
    backend: "pglite",
    query: async <T>(text: string, params: unknown[] = []) => (await pglite.query<T>(text, params)).rows,
    exec: async (script) => {
      await pglite.exec(script);
    },
    close: () => adapter.dispose(),
  };
}

async function openPgSession(adapter: SqlDriverAdapter): Promise<SqlSession> {
  const pool = (adapter as SqlDriverAdapter & { underlyingDriver(): pg.Pool }).underlyingDriver();
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await adapter.dispose();
    throw error;
  }
  return {
    backend: "postgres",
    query: async <T>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[],
    exec: async (script) => {
      // No parameters: node-postgres sends a simple Query, so a script of many statements runs as written.
      await client.query(script);
    },
    close: async () => {
      // Destroyed, not returned to the pool: its session state (an advisory
      // lock, a transaction a failure left open) must not reach the next user.
      client.release(true);
      await adapter.dispose();
    },
  };
}

/**
 * Runs `work` holding the session-level advisory lock `key` on a connection
 * of its own. The lock is PostgreSQL's: a process that dies holding it loses
 * its connection, and with it the lock, so a SIGKILL never leaves it taken.
 */
export async function withAdvisoryLock<T>(
  factory: SqlMigrationAwareDriverAdapterFactory,
  key: number,
  work: (session: SqlSession) => Promise<T>,
  onWait?: () => void,
): Promise<T> {
  const session = await openSqlSession(factory);
  try {
    const [tried] = await session.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [
      key,
    ]);
    if (!tried?.locked) {
      onWait?.();
      await session.query("SELECT pg_advisory_lock($1::bigint)", [key]);
    }
    try {
      return await work(session);
    } finally {
      await session.query("SELECT pg_advisory_unlock($1::bigint)", [key]).catch(() => {});
    }
  } finally {
    await session.close();
  }
}
