/**
 * `npm run db:seed`: demo users, the demo agent token and demo tasks. Completes
 * a seed an interrupted run left half done; a seeded database is left alone.
 */
import { openDatabase } from "@/lib/db/client";
import { ensureEmbeddedDataDir } from "@/lib/db/embedded-init";
import { getEnv } from "@/lib/config/env";
import { ensureDemoData } from "@/programs/seed/seed";

const { database } = getEnv();
if (database.kind === "pglite") await ensureEmbeddedDataDir(database.dir);
const handle = openDatabase(database);
try {
  const { seededNow, tasks } = await ensureDemoData(handle);
  console.log(
    seededNow ? `seeded ${tasks} demo tasks` : "database already seeded (its demo agent token exists): not seeding",
  );
} finally {
  await handle.close();
}
