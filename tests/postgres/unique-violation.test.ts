import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { isUniqueViolation } from "@/lib/db/unique-violation";
import { openTestPglite } from "@/tests/helpers/pglite";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { DEFAULT_TENANT_ID, tenantConnectionOptions } from "@/lib/db/tenant-sessions";

/**
 * One unique violation reaches the engine in three forms; each replay path
 * (twin transition, twin intent, twin instruction, a person deciding twice)
 * depends on recognising all of them. Real violations, on the server and
 * on the embedded database; and a different error is not one.
 */
let server: PostgresTestDatabase;
let embedded: { db: Db; close: () => Promise<void> };
beforeAll(async () => {
  [server, embedded] = await Promise.all([createPostgresTestDatabase(), openTestPglite()]);
});
afterAll(async () => {
  await Promise.all([server?.drop(), embedded?.close()]);
});

const user = (id: string) => ({ id, username: id, displayName: id, role: "operator" as const, passwordHash: "x" });

async function errorOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error("expected the write to fail");
}

describe("isUniqueViolation", () => {
  for (const [name, db] of [
    ["PostgreSQL", () => server.db],
    ["PGlite", () => embedded.db],
  ] as const) {
    it(`${name}: the query builder's P2002 and raw SQL's P2010 are both a unique violation; a foreign-key error is not`, async () => {
      await db().user.create({ data: user(`u-${name}`) });
      const built = await errorOf(() => db().user.create({ data: user(`u-${name}`) }));
      const raw = await errorOf(
        () =>
          db()
            .$executeRaw`INSERT INTO users (id, username, display_name, role, password_hash) VALUES (${`u-${name}`}, ${`u-${name}`}, 'x', 'operator', 'x')`,
      );
      expect([isUniqueViolation(built), isUniqueViolation(raw)]).toEqual([true, true]);
      const other = await errorOf(() => db().$executeRaw`INSERT INTO transitions (id) VALUES ('t-1')`);
      expect(isUniqueViolation(other)).toBe(false);
    });
  }

  it("node-postgres's own 23505 on the direct path", async () => {
    const client = new pg.Client({ connectionString: server.url, options: tenantConnectionOptions(DEFAULT_TENANT_ID) });
    await client.connect();
    try {
      const error = await errorOf(() =>
        client.query(
          "INSERT INTO users (id, username, display_name, role, password_hash) VALUES ('u-PostgreSQL', 'u-PostgreSQL', 'x', 'operator', 'x')",
        ),
      );
      expect(isUniqueViolation(error)).toBe(true);
      expect(isUniqueViolation(new Error("23505"))).toBe(false);
    } finally {
      await client.end();
    }
  });
});
