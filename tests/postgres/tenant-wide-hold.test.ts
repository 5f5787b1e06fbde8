import { afterAll, beforeAll, describe } from "vitest";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { tenantWideHoldCases } from "@/tests/helpers/tenant-wide-hold";

/** A tenant-wide legal hold on PostgreSQL: one pool per tenant, its connections opened as that tenant. */
let database: PostgresTestDatabase;
beforeAll(async () => {
  database = await createPostgresTestDatabase({ poolSize: 2 });
});
afterAll(async () => database?.drop());

describe("a tenant-wide legal hold on PostgreSQL", () => {
  tenantWideHoldCases(() => database);
});
