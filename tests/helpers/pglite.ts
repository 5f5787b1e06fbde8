import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { inject } from "vitest";
import { newPrismaClient, type Db } from "@/lib/db/client";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";

export interface TestDatabase {
  db: Db;
  /** The driver adapter factory, for the migration engine (lib/db/migrate.ts). */
  adapterFactory: PrismaPGlite;
  /** Raw SQL on the same database, for assertions that must not go through the code under test. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

let template: Promise<Blob> | undefined;

/**
 * A fresh in-memory PGlite with every migration applied, loaded from the
 * tarball that tests/helpers/global-setup.ts built for this run. Each call
 * is a separate database: nothing leaks between test files.
 *
 * This builds its own PrismaClient (lib/db/client.ts `openDatabase` opens a data
 * folder, not a tarball); the adapter and client are the ones the app uses.
 */
export async function openTestPglite(): Promise<TestDatabase> {
  template ??= readFile(inject("pgliteTemplatePath")).then((bytes) => new Blob([bytes]));
  const pglite = new PGlite({ loadDataDir: await template });
  await pglite.waitReady;
  const adapterFactory = new PrismaPGlite(pglite);
  const db = newPrismaClient(adapterFactory);
  // What every start does after migrating (scripts/start.ts): new tasks are created under the registry's versions.
  await registerBuiltInWorkflows(db);
  await registerBuiltInTools(db);
  return {
    db,
    adapterFactory,
    sql: async <T>(text: string, params: unknown[] = []) => (await pglite.query<T>(text, params)).rows,
    close: async () => {
      await db.$disconnect();
      await pglite.close();
    },
  };
}
