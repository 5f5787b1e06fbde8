import { expect, it } from "vitest";
import type { Db } from "@/lib/db/client";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { createTenant } from "@/lib/stores/tenants";
import { registerBuiltInWorkflows } from "@/lib/stores/workflow-registry";
import { verifyAuditChains } from "@/lib/stores/audit-log";

/**
 * Row-level security, asked directly: the same cases on the embedded
 * database (tests/db/tenant-isolation.test.ts) and on PostgreSQL
 * (tests/postgres/tenant-isolation.test.ts). Each query here forgets its
 * tenant filter on purpose: only the database's policies stand between it
 * and another tenant's rows.
 */
export interface TenantDatabases {
  forTenant(tenantId: string): Db;
  platformDb: Db;
}

const platformActor = { identity: "spiffe://verity.local/system/platform-test", kind: "system" as const };
const agent = (name: string) => ({ identity: `spiffe://verity.local/agent/${name}`, kind: "agent" as const });

export function tenantIsolationCases(databases: () => TenantDatabases): void {
  let seq = 0;
  /** A new tenant with the built-in workflows, and one task in it. */
  async function tenantWithTask(): Promise<{ tenantId: string; db: Db; taskId: string }> {
    const { platformDb, forTenant } = databases();
    const tenantId = `tenant-${process.pid}-${++seq}-${Date.now().toString(36)}`;
    await createTenant(platformDb, { id: tenantId, name: `Tenant ${seq}` }, platformActor);
    const db = forTenant(tenantId);
    await registerBuiltInWorkflows(db);
    const { task } = await createTask(db, { workflow: "agent-task", intent_id: `intent-${tenantId}` }, agent(tenantId));
    return { tenantId, db, taskId: task.id };
  }

  it("a query without a tenant filter reads only its own tenant's rows, in every table it touches", async () => {
    const a = await tenantWithTask();
    const b = await tenantWithTask();
    const tasksOf = async (db: Db) =>
      (await db.$queryRaw<Array<{ id: string }>>`SELECT id FROM tasks`).map((r) => r.id);
    expect(await tasksOf(a.db)).toEqual([a.taskId]);
    expect(await tasksOf(b.db)).toEqual([b.taskId]);
    // The same through Prisma's query builder, and across the audit log and the registry.
    expect((await a.db.task.findMany()).map((t) => t.id)).toEqual([a.taskId]);
    expect(await a.db.task.findFirst({ where: { id: b.taskId } })).toBeNull();
    const tenantsSeen = await a.db.$queryRaw<Array<{ tenant_id: string }>>`
      SELECT DISTINCT tenant_id FROM audit_entries
      UNION SELECT DISTINCT tenant_id FROM workflow_versions
      UNION SELECT DISTINCT tenant_id FROM transitions
      UNION SELECT id FROM tenants`;
    expect(tenantsSeen.map((r) => r.tenant_id)).toEqual([a.tenantId]);
    // The platform's connection sees both.
    const both = await databases().platformDb.task.findMany({ where: { id: { in: [a.taskId, b.taskId] } } });
    expect(both.map((t) => t.tenantId).sort()).toEqual([a.tenantId, b.tenantId].sort());
  });

  it("an unfiltered UPDATE and DELETE change only the tenant's own rows; another tenant's row cannot be written or moved", async () => {
    const a = await tenantWithTask();
    const b = await tenantWithTask();
    // Every task of the database, says the statement; every task of a's, says the database.
    const updated = await a.db.$executeRaw`UPDATE tasks SET intent_id = 'overwritten'`;
    expect(updated).toBe(1);
    expect(await a.db.$executeRaw`UPDATE tasks SET intent_id = 'overwritten' WHERE id = ${b.taskId}`).toBe(0);
    expect(await a.db.$executeRaw`DELETE FROM task_instructions`).toBe(0);
    const bTask = await b.db.task.findFirstOrThrow({ where: { id: b.taskId } });
    expect(bTask.intentId).toBe(`intent-${b.tenantId}`);
    // A row claiming another tenant is refused by the policy's check, not stored.
    await expect(
      a.db.$executeRaw`INSERT INTO leases (task_id, lease_id, holder, fencing_token, expires_at, tenant_id)
                       VALUES (${b.taskId}, 'lease-x', 'spiffe://x', 1, now(), ${b.tenantId})`,
    ).rejects.toThrow(/row-level security/);
    // Nor can a row be moved to another tenant.
    await expect(a.db.$executeRaw`UPDATE tasks SET tenant_id = ${b.tenantId}`).rejects.toThrow(/row-level security/);
    expect(await b.db.lease.count()).toBe(0);
  });

  it("with no tenant chosen, the application's role reads nothing and writes nothing", async () => {
    await tenantWithTask();
    const { platformDb } = databases();
    const seen = await platformDb.$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL ROLE verity_app`;
      const rows = await tx.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM tasks`;
      const write =
        await tx.$executeRaw`INSERT INTO write_conflicts (id, task_id, expected_version, actual_version, actor, attempted_at)
          VALUES ('wc-none', 't', 1, 2, 'x', now())`.then(
          () => "written",
          (error: Error) => error.message,
        );
      return { count: Number(rows[0]!.n), write };
    });
    expect(seen.count).toBe(0);
    expect(seen.write).not.toBe("written");
  });

  it("each tenant's audit chain is its own: the same stream names in both, each chain verifies from seq 1", async () => {
    const a = await tenantWithTask();
    const b = await tenantWithTask();
    const streamsOf = async (db: Db) =>
      await db.$queryRaw<Array<{ stream: string; first: number }>>`
        SELECT stream, min(seq)::int AS first FROM audit_entries GROUP BY stream ORDER BY stream`;
    const [streamsA, streamsB] = [await streamsOf(a.db), await streamsOf(b.db)];
    // Both tenants wrote "tenant.created" to the stream of that name: two chains, each from 1.
    const shared = streamsA.filter((s) => streamsB.some((t) => t.stream === s.stream));
    expect(shared.length).toBeGreaterThan(0);
    for (const s of [...streamsA, ...streamsB]) expect(s.first).toBe(1);
    for (const t of [a, b]) {
      const report = await verifyAuditChains(t.db);
      expect(report.ok, JSON.stringify(report)).toBe(true);
      const rows = await t.db.auditEntry.findMany({ select: { tenantId: true } });
      expect(new Set(rows.map((r) => r.tenantId))).toEqual(new Set([t.tenantId]));
    }
  });
}
