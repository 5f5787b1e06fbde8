import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInTools } from "@/lib/use-cases/tools/register-built-in-tools";
import { builtInToolDefinitions } from "@/lib/model/tools/built-in-tools";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";

/**
 * Several servers started at once on one database (docs/scale-out.md) each
 * register the shipped tools at start: on real PostgreSQL connections, the
 * registrations of one version wait for each other, so every start succeeds
 * and one row per version is written. Before, a twin's insert hit the unique
 * key and stopped its server's start (seen in tests/live/scale-out.test.ts).
 */
const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };

let database: PostgresTestDatabase;
beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 8 });
});
afterAll(async () => database?.drop());

describe("the shipped tools registered by several starts at once", () => {
  it("every start succeeds, one row per version, registered by exactly one of them", async () => {
    // A fresh tenant each round: its registry is empty, so the starts race again.
    for (let round = 0; round < 4; round++) {
      const tenant = `tools-race-${round}`;
      await createTenant(database.platformDb, { id: tenant, name: tenant }, platformActor);
      const db = database.forTenant(tenant);
      const starts = await Promise.all(Array.from({ length: 4 }, () => registerBuiltInTools(db)));
      const names = Object.values(builtInToolDefinitions).map((d) => `${d.name}@${d.version}`);
      expect(starts.flat().sort()).toEqual([...names].sort());
      expect(await db.toolVersion.count()).toBe(names.length);
    }
  });
});
