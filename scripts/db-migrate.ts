/** `npm run db:migrate`: applies prisma/migrations to the configured database (each migration in one transaction with its record; lib/db/migrate.ts). */
import { openDatabase } from "@/lib/db/client";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { migrateDatabase, MigrationError } from "@/lib/db/migrate";
import { getEnv } from "@/lib/config/env";

const { database } = getEnv();
if (database.kind === "pglite") await ensureEmbeddedDataDir(database.dir);
const handle = openDatabase(database);
// Not process.exitCode: closing PGlite resets it.
let refused = false;
try {
  const applied = await migrateDatabase(handle.adapterFactory, { log: console.log });
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
} catch (error) {
  if (!(error instanceof MigrationError)) throw error;
  console.error(error.message);
  refused = true;
} finally {
  await handle.close();
}
if (refused) process.exit(1);
