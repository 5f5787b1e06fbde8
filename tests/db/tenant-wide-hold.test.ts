import { afterAll, beforeAll, describe } from "vitest";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { tenantWideHoldCases } from "@/tests/helpers/tenant-wide-hold";

/** A tenant-wide legal hold on the embedded database: every tenant's statements share its one connection. */
let database: TestDatabase;
beforeAll(async () => {
  database = await openTestPglite();
});
afterAll(async () => database?.close());

describe("a tenant-wide legal hold on the embedded database", () => {
  tenantWideHoldCases(() => database);
});
