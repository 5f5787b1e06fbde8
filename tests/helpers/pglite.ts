import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import type { PrismaPGlite } from "pglite-prisma-adapter";
import { inject } from "vitest";
import { pgliteHandle, type DatabaseHandle, type Db } from "@/lib/db/client";
import { scopedPglite } from "@/lib/db/tenant-sessions";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";

export interface TestDatabase {
  /** The first tenant's client, under row-level security as the app's are. */
  db: Db;
  /** Another tenant's client on the same database (made on first use). */
  forTenant(tenantId: string): Db;
  /** The owner's client (the platform's): not subject to row-level security. */
  platformDb: Db;
  /** The owner's driver adapter factory, for the migration engine (lib/db/migrate.ts). */
  adapterFactory: PrismaPGlite;
  /** The change announcements, as the server's one listener receives them (lib/db/notifications.ts). */
  listenForChanges: DatabaseHandle["listenForChanges"];
  /** Raw SQL on the same database as its owner, for assertions that must not go through the code under test. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

let template: Promise<Buffer> | undefined;

/**
 * The tarball as PGlite reads it (it asks only for `arrayBuffer()` and
 * `type`). A Node 20 Blob hands its bytes over through a stream of 64 KB
 * chunks joined at the end: for this 27 MB file that was ~0.3 s of CPU per
 * open, once per test file, for a copy the Buffer makes in milliseconds.
 */
function tarballOf(bytes: Buffer): Blob {
  const blob = {
    type: "application/x-tar",
    arrayBuffer: () => Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
  };
  return blob as unknown as Blob;
}

/**
 * A fresh in-memory PGlite with every migration applied, loaded from the
 * tarball that tests/helpers/global-setup.ts built for this run. Each call
 * is a separate database: nothing leaks between test files. With `dataDir`
 * it is kept in that folder, as `npm start` keeps it (for a byte search of
 * its files, tests/helpers/at-rest-search.ts).
 *
 * lib/db/client.ts `openDatabase` opens a data folder, not a tarball; the
 * handle over the open PGlite (`pgliteHandle`) is the one the app uses.
 */
export async function openTestPglite(options: { dataDir?: string } = {}): Promise<TestDatabase> {
  template ??= readFile(inject("pgliteTemplatePath"));
  const pglite = new PGlite({
    loadDataDir: tarballOf(await template),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  await pglite.waitReady;
  const { db, forTenant, platformDb, adapterFactory, listenForChanges, close } = pgliteHandle(pglite);
  // What every start does after migrating (scripts/start.ts): new tasks are created under the registry's versions.
  await registerBuiltInWorkflows(db);
  await registerBuiltInTools(db);
  return {
    db,
    forTenant,
    platformDb,
    adapterFactory,
    listenForChanges,
    sql: async <T>(text: string, params: unknown[] = []) =>
      (await scopedPglite(pglite).owner.query<T>(text, params)).rows,
    close,
  };
}
