/** `npm run db:migrate`: applies prisma/migrations to the configured database. */
import { openDatabase } from "@/lib/db";
import { migrateDatabase } from "@/lib/db/migrate";
import { getEnv } from "@/lib/env";

const handle = openDatabase(getEnv().database);
try {
  const applied = await migrateDatabase(handle.adapterFactory);
  console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
} finally {
  await handle.close();
}
