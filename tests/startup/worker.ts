/**
 * One start of the database phase of `npm start`, as a child process of the
 * startup tests: the same two calls scripts/start.ts makes (migrateDatabase,
 * then ensureDemoData with its 40 extra tasks), on the database named by
 * VERITY_TEST_DATABASE (`postgres:<url>` or `pglite:<folder>`).
 *
 * - VERITY_TEST_KILL_AT=<fault point>: SIGKILL itself there (no finally
 *   blocks, no flush, no COMMIT), after printing `killed at <point>`.
 * - VERITY_TEST_TRACE=1: print `point <name>` at every fault point passed.
 * - VERITY_TEST_MIGRATIONS=<n>: apply only the first n migrations (a
 *   database an earlier release left), and do not seed.
 * - VERITY_TEST_SEED=0: migrate only.
 * - VERITY_TEST_MIGRATIONS_DIR=<folder>: migrations from there instead of prisma/migrations.
 *
 * Ends with `done <json>` and exit 0, or the error and exit 1.
 */
import { writeSync } from "node:fs";
import { openDatabase, type DatabaseTarget } from "@/lib/db/client";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { migrateDatabase, readMigrations } from "@/lib/db/migrate";
import { ensureDemoData } from "@/programs/seed/seed";

const spec = process.env.VERITY_TEST_DATABASE ?? "";
const target: DatabaseTarget = spec.startsWith("postgres:")
  ? { kind: "postgres", url: spec.slice("postgres:".length) }
  : spec.startsWith("pglite:")
    ? { kind: "pglite", dir: spec.slice("pglite:".length) }
    : (() => {
        throw new Error(`VERITY_TEST_DATABASE must be postgres:<url> or pglite:<folder>, got "${spec}"`);
      })();
const killAt = process.env.VERITY_TEST_KILL_AT;
const trace = process.env.VERITY_TEST_TRACE === "1";
const only = process.env.VERITY_TEST_MIGRATIONS ? Number(process.env.VERITY_TEST_MIGRATIONS) : undefined;
const seed = process.env.VERITY_TEST_SEED !== "0" && only === undefined;

// Synchronous writes: the line is in the pipe before the signal.
const say = (line: string) => writeSync(1, `${line}\n`);
const faultPoint = (point: string) => {
  if (trace) say(`point ${point}`);
  if (point === killAt) {
    say(`killed at ${point}`);
    process.kill(process.pid, "SIGKILL");
  }
};

if (target.kind === "pglite") await ensureEmbeddedDataDir(target.dir, { faultPoint });
const handle = openDatabase(target, { poolSize: 2 });
try {
  const all = readMigrations(process.env.VERITY_TEST_MIGRATIONS_DIR || undefined);
  const migrations = only === undefined ? all : all.slice(0, only);
  const applied = await migrateDatabase(handle.adapterFactory, {
    migrations,
    faultPoint,
    log: (line) => say(`log ${line}`),
  });
  const seeded = seed ? await ensureDemoData(handle, { extraTasks: 40, faultPoint }) : null;
  say(`done ${JSON.stringify({ applied, seededNow: seeded?.seededNow ?? false })}`);
  await handle.close();
} catch (error) {
  say(`error ${error instanceof Error ? error.message : String(error)}`);
  await handle.close().catch(() => {});
  // Not process.exitCode before the close: closing PGlite resets it.
  process.exit(1);
}
