import { describe } from "vitest";
import { describeChangeAnnouncements } from "@/tests/helpers/change-announcements-suite";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

/** PostgreSQL's change announcements: a dedicated listening connection (lib/db/notifications.ts). */
describe("change announcements on PostgreSQL", () => {
  describeChangeAnnouncements(async () => {
    const pg = await createPostgresTestDatabase({ poolSize: 2 });
    return { db: pg.db, platformDb: pg.platformDb, listenForChanges: pg.listenForChanges, close: pg.drop };
  });
});
