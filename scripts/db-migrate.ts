/** `npm run db:migrate`: applies prisma/migrations to the configured database (each migration in one transaction with its record; lib/db/migrate.ts). */
import { openDatabase } from "@/lib/db";
import { migrateDatabase, MigrationError } from "@/lib/db/migrate";
import { getEnv } from "@/lib/env";

const handle = openDatabase(getEnv().database);
try {
  const applied = await migrateDatabase(handle.adapterFactory, { log: console.log });
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
} catch (error) {
  if (!(error instanceof MigrationError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
} finally {
  await handle.close();
}
