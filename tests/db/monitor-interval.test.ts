import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";

/**
 * Several servers each run the background loop (docs/scale-out.md): with
 * `everyMs`, a pass that any process started within the interval counts for
 * all of them, so N servers make one pass per interval per tenant, not N; a
 * pass asked for without it (a person's POST /api/v1/monitor/runs) still
 * runs. tests/live/scale-out.test.ts checks the same with three servers.
 */
let database: TestDatabase;
let a: Db;
let b: Db;
const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };

beforeAll(async () => {
  database = await openTestPglite();
  for (const id of ["every-a", "every-b"]) {
    await createTenant(database.platformDb, { id, name: id }, platformActor);
    await registerBuiltInWorkflows(database.forTenant(id));
  }
  a = database.forTenant("every-a");
  b = database.forTenant("every-b");
});
afterAll(async () => database?.close());

describe("the invariant monitor's interval, across processes", () => {
  it("skips a pass while the tenant's last one started within everyMs, and counts per tenant", async () => {
    const first = await runMonitorPass(a, {}, { everyMs: 60_000 });
    expect(first.run).not.toBeNull();
    // A second server's loop, moments later: not due.
    const second = await runMonitorPass(a, {}, { everyMs: 60_000 });
    expect(second.run).toBeNull();
    // Another tenant's interval is its own.
    expect((await runMonitorPass(b, {}, { everyMs: 60_000 })).run).not.toBeNull();
    // Asked for by a person (no interval): runs.
    expect((await runMonitorPass(a)).run).not.toBeNull();
    // A shorter interval than the time since the last start: due again.
    await new Promise((r) => setTimeout(r, 20));
    expect((await runMonitorPass(a, {}, { everyMs: 10 })).run).not.toBeNull();
  });
});
