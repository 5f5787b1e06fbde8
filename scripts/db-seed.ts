/** `npm run db:seed`: demo users, the demo agent token and demo tasks, on an empty database only. */
import { openDatabase } from "@/lib/db";
import { getEnv } from "@/lib/env";
import { isSeeded, seedDemoData } from "@/lib/seed";

const handle = openDatabase(getEnv().database);
try {
  if (await isSeeded(handle.db)) console.log("database already has users: not seeding");
  else console.log(`seeded ${(await seedDemoData(handle.db)).tasks} demo tasks`);
} finally {
  await handle.close();
}
