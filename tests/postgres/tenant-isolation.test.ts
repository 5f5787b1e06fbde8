import { afterAll, beforeAll, describe } from "vitest";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { tenantIsolationCases } from "@/tests/helpers/tenant-isolation";

/** Row-level security on PostgreSQL: one pool per tenant, its connections opened as that tenant. */
let database: PostgresTestDatabase;
beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 2 });
});
afterAll(async () => database?.drop());

describe("tenants on PostgreSQL", () => {
  tenantIsolationCases(() => database);
});
