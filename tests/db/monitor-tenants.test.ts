import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { recordOutcome } from "@/lib/use-cases/executions/record-outcome";
import { runMonitorPass } from "@/lib/use-cases/monitor/run-monitor-pass";
import {
  checkConsistency,
  fetchProviderRecords,
  providerRecordsOfTenant,
} from "@/lib/use-cases/monitor/consistency-check";
import { formatConsistencyReport } from "@/lib/use-cases/monitor/consistency-report";
import { agent, refundExecution } from "@/tests/helpers/effects";
import { completedRefund } from "@/tests/helpers/completed-refund";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { post, sandbox } from "@/tests/sandbox/helpers";

/**
 * The invariant monitor and the consistency checker work tenant by tenant:
 * each reads and writes one tenant's rows on its connection, a violation is
 * raised in the tenant it is in, one tenant's pass in progress does not stop
 * another's, and the provider's records (one account for the deployment,
 * every tenant's effects) are compared with the tenant they belong to.
 */
let database: TestDatabase;
let a: Db;
let b: Db;
const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };
const hourLater = () => new Date(Date.now() + 3_600_000);

beforeAll(async () => {
  database = await openTestPglite();
  for (const id of ["mon-a", "mon-b"]) {
    await createTenant(database.platformDb, { id, name: id }, platformActor);
    await registerBuiltInWorkflows(database.forTenant(id));
  }
  a = database.forTenant("mon-a");
  b = database.forTenant("mon-b");
});
afterAll(async () => database?.close());

describe("the invariant monitor, tenant by tenant", () => {
  it("a violation in one tenant is raised in that tenant, seen by its pass only; each tenant keeps its own runs", async () => {
    const execution = await refundExecution(a);
    await recordOutcome(
      a,
      execution.id,
      { attempt_id: execution.attemptId, outcome: "unknown", error: "timeout" },
      agent,
    );
    const window = { idempotencyWindowMs: () => 1_000 };
    const later = new Date(Date.now() + 60_000);
    const passB = await runMonitorPass(b, window, { only: ["unknown_outcomes"], now: later });
    expect(passB.checks.unknown_outcomes).toMatchObject({ examined: 0, violations: 0 });
    const passA = await runMonitorPass(a, window, { only: ["unknown_outcomes"], now: later });
    expect(passA.checks.unknown_outcomes).toMatchObject({ examined: 1, violations: 1, raised: 1 });
    const alerts = await database.platformDb.divergenceAlert.findMany({ where: { kind: "unknown_outcome_expired" } });
    expect(alerts.map((x) => [x.tenantId, x.executionId])).toEqual([["mon-a", execution.id]]);
    expect(await b.divergenceAlert.count()).toBe(0);
    expect((await a.invariantMonitorRun.findMany()).map((r) => r.id)).toEqual([passA.run?.id]);
    expect((await b.invariantMonitorRun.findMany()).map((r) => r.id)).toEqual([passB.run?.id]);
  });

  it("one tenant's pass in progress stops a second pass of that tenant, not another tenant's", async () => {
    await a.invariantMonitorRun.create({
      data: { id: "mon_in_progress_a", startedAt: new Date(), checks: {}, violations: 0, cursor: {} },
    });
    expect((await runMonitorPass(a, {}, { only: ["task_states"] })).run).toBeNull();
    const passB = await runMonitorPass(b, {}, { only: ["task_states"] });
    expect(passB.run).toMatchObject({ tenantId: "mon-b", finishedAt: expect.any(Date) });
    await a.invariantMonitorRun.update({ where: { id: "mon_in_progress_a" }, data: { finishedAt: new Date() } });
    expect((await runMonitorPass(a, {}, { only: ["task_states"] })).run).not.toBeNull();
  });
});

describe("the consistency checker, tenant by tenant", () => {
  it("another tenant's effects at the shared provider are not this tenant's unrecorded effects; a hand-made one is the first tenant's", async () => {
    const s = await sandbox();
    const ofA = await completedRefund(a, s.url);
    const ofB = await completedRefund(b, s.url);
    // A refund made at the provider by hand, naming no execution of anyone's.
    expect(
      (
        await post(
          `${s.url}/v1/refunds`,
          { amount_cents: 700, currency: "usd", charge_id: "ch_x", customer_id: "cus_x", metadata: {} },
          { "Idempotency-Key": "by-hand-1" },
        )
      ).status,
    ).toBe(200);
    const all = await fetchProviderRecords(s.url);
    expect(all.refunds).toHaveLength(3);

    const recordsA = await providerRecordsOfTenant(database.platformDb, "mon-a", all);
    const recordsB = await providerRecordsOfTenant(database.platformDb, "mon-b", all);
    expect(recordsA.refunds.map((r) => r.idempotency_key)).toEqual([ofA.execution.idempotencyKey]);
    expect(recordsB.refunds.map((r) => r.idempotency_key)).toEqual([ofB.execution.idempotencyKey]);
    const reportA = await checkConsistency(a, { provider: recordsA, now: hourLater() });
    const reportB = await checkConsistency(b, { provider: recordsB, now: hourLater() });
    expect(reportA.findings, formatConsistencyReport(reportA)).toEqual([]);
    expect(reportB.findings, formatConsistencyReport(reportB)).toEqual([]);
    expect(reportA.counts).toMatchObject({ providerRefunds: 1 });
    expect(reportB.counts).toMatchObject({ tasks: 1, executions: 1, providerRefunds: 1 });

    // The refund nobody recorded is found, once, by the first tenant (as its webhook is received there).
    const first = await providerRecordsOfTenant(database.platformDb, DEFAULT_TENANT_ID, all);
    const report = await checkConsistency(database.db, { provider: first, now: hourLater() });
    expect(report.findings.map((f) => f.code)).toEqual(["provider_effect_without_execution"]);
    expect(report.findings[0]?.message).toContain("by-hand-1");

    // The whole list against one tenant: what the checker said before it was split by tenant.
    const unsplit = await checkConsistency(a, { provider: all, now: hourLater() });
    expect(unsplit.findings.filter((f) => f.code === "provider_effect_without_execution")).toHaveLength(2);
  });
});
