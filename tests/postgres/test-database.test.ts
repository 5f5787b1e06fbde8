import { readdirSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { directQuery, openDatabase } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { migrationsDir } from "@/lib/db/migrate";
import { createPostgresTestDatabase, testDatabaseUrl } from "@/tests/helpers/postgres";

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    return (await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/** Server processes connected to `database` (with that application_name, if given), asked on `client`. */
async function backendsOn(database: string, applicationName?: string, client?: pg.Client): Promise<number> {
  const own = client ? undefined : new pg.Client({ connectionString: testDatabaseUrl() });
  await own?.connect();
  try {
    const { rows } = await (client ?? own)!.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND ($2::text IS NULL OR application_name = $2)",
      [database, applicationName ?? null],
    );
    return rows[0]!.n;
  } finally {
    await own?.end();
  }
}

describe("createPostgresTestDatabase", () => {
  it("creates a throwaway database, migrates it to schema.prisma, and drops it", async () => {
    const t = await createPostgresTestDatabase();
    try {
      expect(t.name).toMatch(/^verity_test_[0-9a-f]{12}$/);
      expect(await databaseExists(t.name)).toBe(true);
      const applied = await t.platformDb.$queryRaw<
        Array<{ migration_name: string }>
      >`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY 1`;
      const folders = readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort();
      expect(applied.map((r) => r.migration_name)).toEqual(folders);
      // (diffDatabaseToSchema would be the stronger check, but through the pg
      // adapter the engine's introspection fails on a "char" column; the
      // PGlite helper test runs it on the same migrations.)
      const tables = await t.platformDb.$queryRaw<
        Array<{ table_name: string }>
      >`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`;
      expect(tables.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(["_prisma_migrations", "tasks", "transitions", "users", "api_tokens"]),
      );
    } finally {
      await t.drop();
    }
    expect(await databaseExists(t.name)).toBe(false);
  });

  it("closes a handle only once its connections are gone, so a drop right after terminates nothing", async () => {
    const t = await createPostgresTestDatabase();
    const url = new URL(t.url);
    url.searchParams.set("application_name", "verity-close-test");
    const handle = openDatabase({ kind: "postgres", url: url.toString() }, { poolSize: 4 });
    try {
      // Four connections open at once: four statements in flight, each holding one.
      await Promise.all(
        Array.from({ length: 4 }, () => handle.platformDb.$queryRaw`SELECT 1 AS one FROM pg_sleep(0.05)`),
      );
      const admin = new pg.Client({ connectionString: testDatabaseUrl() });
      await admin.connect();
      try {
        expect(await backendsOn(t.name, "verity-close-test", admin)).toBe(4);
        await handle.close();
        // pg-pool's end() alone resolved before the sockets closed: backends were still there.
        expect(await backendsOn(t.name, "verity-close-test", admin)).toBe(0);
      } finally {
        await admin.end();
      }
    } finally {
      await t.drop();
    }
  });

  it("keeps serving when the server terminates its idle connections (no unhandled 'error')", async () => {
    const t = await createPostgresTestDatabase();
    // A handle whose pool only the direct path has used: Prisma, which adds an 'error' listener of its
    // own when it first connects, has not, so only ours stands between a terminated connection and a crash.
    const handle = openDatabase({ kind: "postgres", url: t.url }, { poolSize: 3 });
    const sleep = Prisma.sql`SELECT 1 AS one FROM pg_sleep(0.05)`;
    try {
      await Promise.all(Array.from({ length: 3 }, () => directQuery(handle.platformDb, sleep)));
      const admin = new pg.Client({ connectionString: testDatabaseUrl() });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ n: number }>(
          `WITH theirs AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE datname = $1)
           SELECT count(*)::int AS n FROM theirs WHERE pg_terminate_backend(pid)`,
          [t.name],
        );
        expect(rows[0]!.n).toBeGreaterThanOrEqual(3);
        while ((await backendsOn(t.name, undefined, admin)) > 0);
      } finally {
        await admin.end();
      }
      // The pool dropped its dead connections on the 'error' event (our listener logs it) and opens new ones.
      expect(await directQuery(handle.platformDb, Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    } finally {
      await handle.close();
      await t.drop();
    }
  });

  it("fails, never skips, when PostgreSQL is unreachable, and says how to start it", async () => {
    const saved = process.env.TEST_DATABASE_URL;
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    process.env.TEST_DATABASE_URL = "postgresql://postgres@127.0.0.1:1/postgres";
    try {
      await expect(createPostgresTestDatabase()).rejects.toThrow(
        /not reachable at 127\.0\.0\.1:1 .*pg_ctlcluster --skip-systemctl-redirect \$\(ls \/etc\/postgresql\) main start/,
      );
    } finally {
      if (saved === undefined) delete process.env.TEST_DATABASE_URL;
      else process.env.TEST_DATABASE_URL = saved;
    }
  });
});
