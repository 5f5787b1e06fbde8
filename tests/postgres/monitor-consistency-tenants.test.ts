import { execFile } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import { tenantConnectionOptions } from "@/lib/db/tenant-sessions";
import { completedRefund } from "@/tests/helpers/completed-refund";
import { createPostgresTestDatabase, type PostgresTestDatabase } from "@/tests/helpers/postgres";
import { sandbox } from "@/tests/sandbox/helpers";

/**
 * On the PostgreSQL server, where a second connection can hold a lock: the
 * monitor's claim is serialized per tenant (one tenant's pass waits for its
 * own tenant's claim only), and `npm run check:consistency` checks each
 * tenant against its own share of the shared provider's records.
 */
const root = path.resolve(import.meta.dirname, "../..");
const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };
let db: PostgresTestDatabase;
beforeAll(async () => {
  db = await createPostgresTestDatabase({ poolSize: 2 });
  for (const id of ["pg-mon-a", "pg-mon-b"]) {
    await createTenant(db.platformDb, { id, name: id }, platformActor);
    await registerBuiltInWorkflows(db.forTenant(id));
  }
});
afterAll(async () => db?.drop());

/** The script as an operator runs it; asynchronously, as the sandbox it asks answers from this process. */
function checkConsistencyCli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/check-consistency.ts", ...args],
      { cwd: root, env: { ...process.env, DATABASE_URL: db.url }, encoding: "utf8", timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe("the monitor's claim, per tenant", () => {
  it("a claim held in tenant a holds a's next pass, not b's", async () => {
    const holder = new pg.Client({ connectionString: db.url, options: tenantConnectionOptions("pg-mon-a") });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      // The lock a's claim takes (run-monitor-pass.ts claimRun), held as if a's claim were under way.
      await holder.query(
        "SELECT pg_advisory_xact_lock(hashtextextended('verity:invariant-monitor' || ':' || verity_current_tenant(), 0))",
      );
      let aDone = false;
      const passA = runMonitorPass(db.forTenant("pg-mon-a"), {}, { only: ["task_states"] }).then((r) => {
        aDone = true;
        return r;
      });
      const passB = await runMonitorPass(db.forTenant("pg-mon-b"), {}, { only: ["task_states"] });
      expect(passB.run).toMatchObject({ tenantId: "pg-mon-b" });
      await new Promise((r) => setTimeout(r, 300));
      expect(aDone).toBe(false);
      await holder.query("COMMIT");
      expect((await passA).run).toMatchObject({ tenantId: "pg-mon-a" });
    } finally {
      await holder.end();
    }
  });
});

describe("npm run check:consistency, tenant by tenant", () => {
  it("each tenant's refunds at the shared provider are its own, not another's unrecorded effects; --tenant checks one", async () => {
    const s = await sandbox();
    await completedRefund(db.forTenant("pg-mon-a"), s.url);
    await completedRefund(db.forTenant("pg-mon-b"), s.url);

    const all = await checkConsistencyCli("--provider-url", s.url, "--grace-ms", "0", "--json");
    expect(all.status, all.stdout + all.stderr).toBe(0);
    const parsed = JSON.parse(all.stdout) as {
      ok: boolean;
      tenants: Record<string, { ok: boolean; counts: { providerRefunds: number } }>;
    };
    expect(parsed.ok).toBe(true);
    expect(Object.keys(parsed.tenants).sort()).toEqual(["default", "pg-mon-a", "pg-mon-b"]);
    expect(parsed.tenants["pg-mon-a"]?.counts.providerRefunds).toBe(1);
    expect(parsed.tenants.default?.counts.providerRefunds).toBe(0);

    const one = await checkConsistencyCli("--tenant", "pg-mon-a", "--provider-url", s.url);
    expect(one.status, one.stdout + one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^Tenant pg-mon-a\nCONSISTENT/);
    expect(one.stdout).not.toContain("pg-mon-b");

    const unknown = await checkConsistencyCli("--tenant", "nobody");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no tenant "nobody"');
  });
});
