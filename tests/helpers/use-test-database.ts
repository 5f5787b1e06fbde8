import { afterAll, beforeAll } from "vitest";
import type { Db } from "@/lib/db/client";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * A fresh migrated PGlite for the enclosing file (called at the top level)
 * or describe block (called inside it): opened before its first test and
 * closed after its last, the set-up every database test file wrote out.
 *
 * The database only exists once beforeAll has run, but tests and their
 * helpers want a `db` they can name at the top of the file; so this returns
 * a stand-in that forwards every property to the open client (methods bound
 * to it, so `$transaction` and the model delegates behave as the client's
 * own). Touching it outside a test or hook is a mistake, and says so.
 */
export function useTestDatabase(): Db {
  let opened: TestDatabase | undefined;
  beforeAll(async () => {
    opened = await openTestPglite();
  });
  afterAll(async () => {
    await opened?.close();
    opened = undefined;
  });
  const standIn = new Proxy({} as Db, {
    get(_stand_in, property) {
      if (!opened)
        throw new Error(
          `useTestDatabase: db.${String(property)} used outside a test or hook; the database is open only between beforeAll and afterAll.`,
        );
      const client = opened.db;
      const value: unknown = Reflect.get(client, property, client);
      return typeof value === "function" ? value.bind(client) : value;
    },
  });
  ownerClients.set(standIn, () => {
    if (!opened) throw new Error("useTestDatabase: the owner's client used outside a test or hook.");
    return opened.platformDb;
  });
  return standIn;
}

const ownerClients = new WeakMap<Db, () => Db>();

/**
 * The owner's client of a useTestDatabase database (not held by row-level
 * security): for what only a table's owner may do, such as disabling a
 * trigger to corrupt a row on purpose.
 */
export function ownerClientOf(db: Db): Db {
  const owner = ownerClients.get(db);
  if (!owner) throw new Error("ownerClientOf: not a useTestDatabase client");
  return owner();
}
