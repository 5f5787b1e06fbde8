import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directQuery, transactionOn, type Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { openTestPglite } from "@/tests/helpers/pglite";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * The ledger's steps (transactionOn) send their statements through
 * directQuery on the transaction's own node-postgres connection, next to
 * what helpers send through Prisma's transaction client. Both must be one
 * transaction: seen by each other, by nobody else before COMMIT, gone
 * together on a rollback, and never another transaction's connection when
 * many run at once. On PostgreSQL the transaction is transactionOn's own
 * (BEGIN and COMMIT on a pooled connection, Prisma's client bound to it):
 * a client kept past the transaction is refused, and a COMMIT that fails
 * fails the step and gives the connection back. The embedded database takes
 * Prisma's path for both.
 */
let server: PostgresTestDatabase;
let embedded: { db: Db; close: () => Promise<void> };
beforeAll(async () => {
  [server, embedded] = await Promise.all([createPostgresTestDatabase({ poolSize: 12 }), openTestPglite()]);
});
afterAll(async () => {
  await Promise.all([server?.drop(), embedded?.close()]);
});

const user = (id: string) => ({ id, username: id, displayName: id, role: "operator" as const, passwordHash: "x" });
const countOf = async (db: Db, id: string) =>
  (await directQuery<{ n: number }>(db, Prisma.sql`SELECT count(*)::int AS n FROM users WHERE id = ${id}`))[0]!.n;

describe("transactionOn with directQuery", () => {
  for (const [name, db] of [
    ["PostgreSQL", () => server.db],
    ["PGlite", () => embedded.db],
  ] as const) {
    it(`${name}: a direct statement and a Prisma one are one transaction: seen inside, not outside before commit, undone together`, async () => {
      const seenOutside: number[] = [];
      await transactionOn(db(), async (tx) => {
        await tx.user.create({ data: user(`${name}-a`) });
        await directQuery(tx, Prisma.sql`UPDATE users SET display_name = 'direct' WHERE id = ${`${name}-a`}`);
        const [row] = await directQuery<{ display_name: string }>(
          tx,
          Prisma.sql`SELECT display_name FROM users WHERE id = ${`${name}-a`}`,
        );
        expect(row?.display_name).toBe("direct");
        expect((await tx.user.findUnique({ where: { id: `${name}-a` } }))?.displayName).toBe("direct");
        // PGlite's one connection is the transaction's until it ends: only the server can be asked from outside.
        if (name === "PostgreSQL") seenOutside.push(await countOf(db(), `${name}-a`));
      });
      if (name === "PostgreSQL") expect(seenOutside).toEqual([0]);
      expect(await countOf(db(), `${name}-a`)).toBe(1);

      await expect(
        transactionOn(db(), async (tx) => {
          await directQuery(
            tx,
            Prisma.sql`INSERT INTO users (id, username, display_name, role, password_hash) VALUES (${`${name}-b`}, ${`${name}-b`}, 'b', 'operator', 'x')`,
          );
          await tx.user.update({ where: { id: `${name}-a` }, data: { displayName: "rolled back" } });
          throw new Error("the step fails after both writes");
        }),
      ).rejects.toThrow("the step fails after both writes");
      expect(await countOf(db(), `${name}-b`)).toBe(0);
      expect((await db().user.findUnique({ where: { id: `${name}-a` } }))?.displayName).toBe("direct");
    });
  }

  it("PostgreSQL: concurrent transactions each run their direct statements on their own connection", async () => {
    const db = server.db;
    const pids = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        transactionOn(db, async (tx) => {
          const [prisma] = await tx.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`;
          await directQuery(
            tx,
            Prisma.sql`INSERT INTO users (id, username, display_name, role, password_hash) VALUES (${`c-${i}`}, ${`c-${i}`}, 'c', 'operator', 'x')`,
          );
          const [direct] = await directQuery<{ pid: number; mine: number }>(
            tx,
            Prisma.sql`SELECT pg_backend_pid() AS pid, (SELECT count(*)::int FROM users WHERE id = ${`c-${i}`}) AS mine`,
            { prepare: "test_pid" },
          );
          return { prisma: prisma!.pid, direct: direct!.pid, mine: direct!.mine };
        }),
      ),
    );
    // Each direct statement ran on its transaction's backend and saw that transaction's uncommitted row.
    for (const p of pids) expect(p).toEqual({ prisma: p.direct, direct: p.prisma, mine: 1 });
    expect(new Set(pids.map((p) => p.prisma)).size).toBe(10);
    expect(await countOf(db, "c-0")).toBe(1);
  });

  it("PostgreSQL: a transaction client kept past its transaction is refused, a model's delegate too, and nothing it asks runs", async () => {
    const db = server.db;
    let kept: Parameters<Parameters<typeof transactionOn>[1]>[0] | undefined;
    let users: { count: () => Promise<number> } | undefined;
    await transactionOn(db, async (tx) => {
      kept = tx;
      users = tx.user;
      expect(await users.count()).toBeGreaterThanOrEqual(0);
    });
    const late = "This transaction has ended";
    expect(() => kept!.user).toThrow(late);
    await expect(Promise.resolve().then(() => users!.count())).rejects.toThrow(late);
    await expect(
      directQuery(
        kept!,
        Prisma.sql`INSERT INTO users (id, username, display_name, role, password_hash) VALUES ('late', 'late', 'l', 'operator', 'x')`,
      ),
    ).rejects.toThrow(late);
    expect(await countOf(db, "late")).toBe(0);
  });

  it("PostgreSQL: a COMMIT refused by a deferred constraint fails the step, keeps nothing, and the pool serves the next ones", async () => {
    const db = server.db;
    // Made by the owner (a tenant's role creates nothing), written by the tenant's connections.
    await directQuery(
      server.platformDb,
      Prisma.sql`CREATE TABLE IF NOT EXISTS deferred_keys (k text, CONSTRAINT deferred_keys_k UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)`,
    );
    await directQuery(server.platformDb, Prisma.sql`GRANT ALL ON deferred_keys TO PUBLIC`);
    // More failed steps than the pool has connections: each one's connection must come back (or be replaced).
    for (let i = 0; i < 14; i++) {
      await expect(
        transactionOn(db, async (tx) => {
          await directQuery(tx, Prisma.sql`INSERT INTO deferred_keys VALUES ('same'), ('same')`);
          await tx.user.create({ data: user(`deferred-${i}`) });
        }),
      ).rejects.toMatchObject({ code: "23505" });
    }
    expect(await countOf(db, "deferred-0")).toBe(0);
    const [{ n }] = (await directQuery<{ n: number }>(
      db,
      Prisma.sql`SELECT count(*)::int AS n FROM deferred_keys`,
    )) as [{ n: number }];
    expect(n).toBe(0);
    const done = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        transactionOn(db, async (tx) => (await tx.user.create({ data: user(`after-${i}`) })).id),
      ),
    );
    expect(done).toHaveLength(12);
    expect(await countOf(db, "after-11")).toBe(1);
  });
});
