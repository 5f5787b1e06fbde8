import { readdirSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
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
