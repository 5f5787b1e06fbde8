/**
 * "Crash-safe from the first second" (issue 9) on the embedded database: the
 * database phase of `npm start` (tests/startup/worker.ts) on a fresh PGlite
 * folder, SIGKILLed while initdb unpacks the folder, at the steps that put
 * it in place, inside every migration and through the seed; the next start
 * must always succeed and the folder must end equal to a database migrated
 * and seeded without interruption. The PostgreSQL counterpart, with the
 * stalled-transaction, timed and concurrent kills, is
 * tests/postgres/startup-kill.test.ts.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { readMigrations } from "@/lib/db/migrate";
import { applyMigrationsWithPrismaEngine, diffDatabaseToSchema } from "@/lib/db/schema-engine";
import { seedDemoData } from "@/programs/seed/seed";
import { openTestPglite } from "@/tests/helpers/pglite";
import { expectSeedUsable, killAtEachPoint, queryOf, snapshotDatabase, startWorker } from "@/tests/startup/helpers";

const migrations = readMigrations();
const last = migrations.at(-1)!.name;
const root = mkdtempSync(path.join(os.tmpdir(), "verity-startup-"));
let reference: Record<string, unknown>;

beforeAll(async () => {
  // The database a start that was never interrupted leaves (migrated by the
  // same applier, tests/helpers/global-setup.ts, then seeded as start.ts does).
  const clean = await openTestPglite();
  try {
    await seedDemoData(clean.db, { extraTasks: 40 });
    reference = await snapshotDatabase(queryOf(clean.platformDb));
  } finally {
    await clean.close();
  }
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function withFolder<T>(dir: string, work: (handle: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const handle = openDatabase({ kind: "pglite", dir });
  try {
    return await work(handle);
  } finally {
    await handle.close();
  }
}

describe("a start killed at any point on a fresh PGlite folder", () => {
  it("killed while initdb unpacks the folder, inside migrations and through the seed: the next start always succeeds and the end equals a clean start", async () => {
    const dir = path.join(root, "first-start", "pglite");
    // PGlite unpacks initdb's result file by file, PG_VERSION before the
    // configuration: killed there, a folder used in place would be taken for
    // a database and fail every start. The files appear under <dir>.partial.
    const unpacking = startWorker(`pglite:${dir}`);
    await waitUntil(() => existsSync(`${dir}.partial`) && readdirSync(`${dir}.partial`).length > 0);
    unpacking.kill();
    expect((await unpacking.exited).signal).toBe("SIGKILL");
    expect(existsSync(dir)).toBe(false);

    // A range through the start (every migration is killed on PostgreSQL,
    // where a start costs less): inside the first migration (its start
    // rebuilds the folder the kill above left half built), the audit log's
    // (functions and triggers), the last one, mid-seed, and right after the
    // seed's marker.
    const inside = [
      ...new Set([
        migrations[0]!,
        migrations.find((m) => m.name.endsWith("_audit_log")) ?? migrations[0]!,
        migrations.at(-1)!,
      ]),
    ];
    const points = [
      ...inside.map((m) => `migrate:inside:${m.name}`),
      "seed:task:demo-refund-order-1010:v4",
      "seed:done",
    ];
    expect(await killAtEachPoint(`pglite:${dir}`, points)).toEqual({ applied: [], seededNow: false });
    await withFolder(dir, async ({ db, platformDb }) => {
      await expectSeedUsable(db, queryOf(db));
      expect(await snapshotDatabase(queryOf(platformDb))).toEqual(reference);
    });
  }, 240_000);

  it("upgrade start: the first migrations applied by Prisma's engine, the start killed inside each remaining one; Prisma's engine then finds nothing to apply and nothing to diff", async () => {
    const dir = path.join(root, "upgrade", "pglite");
    const kept = Math.max(1, migrations.length - 2);
    await ensureEmbeddedDataDir(dir);
    await withFolder(dir, async ({ adapterFactory }) => {
      expect(await applyMigrationsWithPrismaEngine(adapterFactory, migrations.slice(0, kept))).toHaveLength(kept);
    });
    const points = migrations.slice(kept).map((m) => `migrate:inside:${m.name}`);
    expect((await killAtEachPoint(`pglite:${dir}`, points, { VERITY_TEST_SEED: "0" })).applied).toEqual([last]);
    await withFolder(dir, async ({ platformDb, adapterFactory }) => {
      const { schema, history } = await snapshotDatabase(queryOf(platformDb));
      expect({ schema, history }).toEqual({ schema: reference.schema, history: reference.history });
      // What `prisma migrate deploy` and `prisma migrate diff` would say of this database.
      expect(await applyMigrationsWithPrismaEngine(adapterFactory)).toEqual([]);
      const diff = await diffDatabaseToSchema(adapterFactory);
      expect(
        diff.split("\n").filter((l) => l.trim() && !l.trim().startsWith("--")),
        diff,
      ).toEqual([]);
    });
  }, 180_000);
});

/** Polls the file system (it has no event for "a file appeared under a folder that does not exist yet"). */
async function waitUntil(condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
