import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { getEnv, type Env } from "@/lib/env";

export type Db = PrismaClient;
/** A Prisma transaction client: helpers that may join a transaction take one. */
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

export type DatabaseTarget = Env["database"];

/**
 * Every client is built here. Interactive transactions get generous limits:
 * Prisma's 5 s default aborted correct transactions on a loaded 2-core
 * machine (seen in the chaos test), and correctness never depends on the
 * timeout — the version checks and row locks in PostgreSQL do.
 */
export function newPrismaClient(adapter: PrismaPg | PrismaPGlite): PrismaClient {
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 15_000, timeout: 60_000 } });
}

export interface DatabaseHandle {
  db: PrismaClient;
  /** The driver adapter factory, for the migration engine. */
  adapterFactory: PrismaPg | PrismaPGlite;
  close(): Promise<void>;
}

/**
 * The one place a PrismaClient is built. The app uses the singleton below;
 * scripts and tests that need their own connection (a second process, a
 * throwaway database) call this directly.
 */
export function openDatabase(target: DatabaseTarget, options: { poolSize?: number } = {}): DatabaseHandle {
  if (target.kind === "postgres") {
    const adapterFactory = new PrismaPg({ connectionString: target.url, max: options.poolSize ?? 10 });
    const db = newPrismaClient(adapterFactory);
    return { db, adapterFactory, close: () => db.$disconnect() };
  }
  // PGlite does not create the parent of its data folder ("memory://" is an in-memory database).
  if (!target.dir.startsWith("memory://")) mkdirSync(target.dir, { recursive: true });
  const pglite = new PGlite(target.dir);
  const adapterFactory = new PrismaPGlite(pglite);
  const db = newPrismaClient(adapterFactory);
  return {
    db,
    adapterFactory,
    close: async () => {
      await db.$disconnect();
      await pglite.close();
    },
  };
}

const globalForDb = globalThis as unknown as { verityDb?: DatabaseHandle };

/** The process-wide client, built from the validated config on first use. */
export function getDb(): PrismaClient {
  if (!globalForDb.verityDb) {
    const env = getEnv();
    const handle = openDatabase(env.database, { poolSize: env.VERITY_DB_POOL_SIZE });
    globalForDb.verityDb = handle;
    // A PGlite instance whose open failed stays failed: forget it so the next
    // request tries again instead of failing forever.
    handle.db.$connect().catch(() => {
      if (globalForDb.verityDb === handle) globalForDb.verityDb = undefined;
    });
  }
  return globalForDb.verityDb.db;
}
