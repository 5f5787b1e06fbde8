import { afterAll, beforeAll, describe } from "vitest";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { tenantIsolationCases } from "@/tests/helpers/tenant-isolation";

/** Row-level security on the embedded database: every tenant's statements share its one connection. */
let database: TestDatabase;
beforeAll(async () => {
  database = await openTestPglite();
});
afterAll(async () => database?.close());

describe("tenants on the embedded database", () => {
  tenantIsolationCases(() => database);
});
