import { beforeAll, expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import type { Actor } from "@/lib/model/actor";
import { verifyAuditChains } from "@/lib/stores/audit-log";
import { setRetentionTerm } from "@/lib/stores/retention-policies";
import { addAnnotation } from "@/lib/use-cases/audit/annotate-audit-entry";
import { placeLegalHold, releaseLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { applyRetentionPolicy } from "@/lib/use-cases/retention/apply-retention-policy";
import { applyTaskRetention } from "@/lib/use-cases/retention/apply-task-retention";
import { openTenant } from "@/lib/use-cases/tenants/open-tenant";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { agent, alice, runningTask } from "@/tests/helpers/effects";

/**
 * A tenant-wide legal hold (no task, no time range) on the embedded
 * database: while it is in force no retention run deletes anything of that
 * tenant — by a number of days or by its policy, task data or the audit
 * entries the database guard checks — annotations are still added, and
 * another tenant's retention goes on. Released, the tenant's finished task
 * goes. The run's clock is put 30 days ahead instead of waiting. The same
 * cases on the embedded database (tests/db/tenant-wide-hold.test.ts) and on
 * PostgreSQL (tests/postgres/tenant-wide-hold.test.ts), where each tenant
 * has its own pool and the holds' lock is a real table lock.
 */
export interface TenantDatabases {
  db: Db;
  forTenant(tenantId: string): Db;
  platformDb: Db;
}

const platformAdmin: Actor = { identity: "system:cli", kind: "system" };
const thirtyDaysOn = () => Date.now() + 30 * 86_400_000;

async function finishedTask(db: Db): Promise<string> {
  const task = await runningTask(db);
  await transitionTask(db, task.id, { expected_version: task.version, to: "CANCELLED", reason: "done" }, agent);
  return task.id;
}

async function taskExists(t: TenantDatabases, id: string): Promise<boolean> {
  return (await t.platformDb.$queryRawUnsafe<unknown[]>("SELECT 1 FROM tasks WHERE id = $1", id)).length > 0;
}

/** Whether the database's own guard (audit_cut_stream) would find an entry of no task, written now, held. */
async function guardHoldsEverything(db: Db): Promise<boolean> {
  const [row] = await db.$queryRaw<Array<{ held: boolean }>>`SELECT audit_hold_covers(NULL, now()) AS held`;
  return row!.held;
}

export function tenantWideHoldCases(databases: () => TenantDatabases): void {
  let t: TenantDatabases;
  let beta: Db;
  beforeAll(async () => {
    t = databases();
    await openTenant(t, { id: "beta", name: "Beta" }, platformAdmin);
    beta = t.forTenant("beta");
  });

  it("freezes every retention run of its tenant, allows annotations, and leaves other tenants' retention alone", async () => {
    const betaTask = await finishedTask(beta);
    const defaultTask = await finishedTask(t.db);
    const hold = await placeLegalHold(beta, { reason: "regulator's inquiry 2026-14" }, alice);
    expect(hold).toMatchObject({ taskId: null, fromAt: null, toAt: null });

    const byDays = await applyTaskRetention(beta, { olderThanDays: 30 }, platformAdmin, { clock: thirtyDaysOn });
    expect(byDays).toMatchObject({ tasks: [], entry: null });
    expect(byDays.heldTasks).toContain(betaTask);
    await setRetentionTerm(beta, { data_class: "confidential", keep_days: 30 }, alice);
    const byPolicy = await applyRetentionPolicy(beta, platformAdmin, { clock: thirtyDaysOn });
    expect(byPolicy).toMatchObject({ tasks: [], entry: null });
    expect(await taskExists(t, betaTask)).toBe(true);
    expect(await guardHoldsEverything(beta)).toBe(true);

    // A correction is still added under the hold.
    const [created] = await t.platformDb.$queryRawUnsafe<Array<{ id: string }>>(
      "SELECT id FROM audit_entries WHERE tenant_id = 'beta' AND task_id = $1 AND action = 'task.created'",
      betaTask,
    );
    const note = await addAnnotation(beta, { entry_id: created!.id, note: "Opened for the wrong customer" }, alice);
    expect(note.action).toBe("annotation.added");

    // The other tenant sees no hold of its own: its finished task goes.
    expect(await guardHoldsEverything(t.db)).toBe(false);
    const other = await applyTaskRetention(t.db, { olderThanDays: 30 }, platformAdmin, { clock: thirtyDaysOn });
    expect(other.tasks.map((x) => x.id)).toContain(defaultTask);
    expect(other.heldTasks).toEqual([]);

    await releaseLegalHold(beta, hold.id, "inquiry closed", alice);
    const released = await applyRetentionPolicy(beta, platformAdmin, { clock: thirtyDaysOn });
    expect(released?.tasks.map((x) => x.id)).toContain(betaTask);
    expect(await taskExists(t, betaTask)).toBe(false);
    expect((await verifyAuditChains(beta)).ok).toBe(true);
    expect((await verifyAuditChains(t.db)).ok).toBe(true);
  });
}
