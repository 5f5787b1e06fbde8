import { describe } from "vitest";
import { describeTaskCounts } from "@/tests/helpers/task-counts-suite";
import { createPostgresTestDatabase } from "@/tests/helpers/postgres";

/** On PostgreSQL the writers and the two folds run on connections of their own, at once. */
describe("task counts on PostgreSQL", () => {
  describeTaskCounts(
    async () => {
      const pg = await createPostgresTestDatabase({ poolSize: 8 });
      return { db: pg.db, forTenant: pg.forTenant, platformDb: pg.platformDb, close: pg.drop };
    },
    { writers: 6 },
  );
});
