import { noteTransactionTenant, type Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { Prisma, Tenant } from "@/lib/generated/prisma/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { tenantAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry } from "@/lib/stores/audit-log";
import { assertTenantId } from "@/lib/db/tenant-sessions";

/**
 * The tenant register: the only writer of `tenants`. Its writes run on the
 * platform's (owner's) connection, which row-level security does not hold;
 * each change is recorded in the tenant's own audit chain, in the same
 * transaction, by taking the tenant's setting for that transaction (so the
 * entry's tenant_id, and its stream head's, are the tenant's).
 */

export type TenantStatus = "active" | "suspended" | "deleted";

export interface TenantView {
  id: string;
  name: string;
  status: TenantStatus;
  created_at: string;
  suspended_at: string | null;
  deleted_at: string | null;
  /** The deletion record (lib/use-cases/tenants/delete-tenant.ts), once deleted. */
  deletion: Record<string, unknown> | null;
}

export function tenantView(row: Tenant): TenantView {
  return {
    id: row.id,
    name: row.name,
    status: row.status as TenantStatus,
    created_at: row.createdAt.toISOString(),
    suspended_at: row.suspendedAt?.toISOString() ?? null,
    deleted_at: row.deletedAt?.toISOString() ?? null,
    deletion: (row.deletion as Record<string, unknown> | null) ?? null,
  };
}

export async function listTenants(platformDb: Db): Promise<TenantView[]> {
  return (await platformDb.tenant.findMany({ orderBy: { createdAt: "asc" } })).map(tenantView);
}

/** The tenant, or null: on a tenant's own connection only its own entry is visible. */
export async function findTenant(db: Db, tenantId: string): Promise<TenantView | null> {
  const row = await db.tenant.findUnique({ where: { id: tenantId } });
  return row ? tenantView(row) : null;
}

export async function createTenant(
  platformDb: Db,
  input: { id: string; name: string },
  actor: AuditActor,
): Promise<TenantView> {
  const id = assertTenantId(input.id);
  const name = input.name.trim();
  if (!name || name.length > 200)
    throw new AppError("validation_failed", "A tenant needs a name of 1–200 characters.", {
      errors: [{ field: "name", message: "must be 1–200 characters" }],
    });
  return platformDb.$transaction(async (tx) => {
    const existing = await tx.tenant.findUnique({ where: { id } });
    if (existing)
      throw new AppError("validation_failed", `A tenant with the id ${id} exists already.`, {
        errors: [{ field: "id", message: "is taken by another tenant" }],
      });
    const row = await tx.tenant.create({ data: { id, name } });
    await writeAsTenant(tx, id);
    await appendAuditEntry(tx, tenantAuditEntry("tenant.created", id, actor, { name }));
    return tenantView(row);
  });
}

/** Suspends (people and agents of the tenant are refused, its background work stops) or reactivates a tenant. */
export async function setTenantStatus(
  platformDb: Db,
  tenantId: string,
  status: Exclude<TenantStatus, "deleted">,
  reason: string,
  actor: AuditActor,
): Promise<TenantView> {
  const why = reason.trim();
  if (!why)
    throw new AppError("validation_failed", "Say why the tenant's status changes.", {
      errors: [{ field: "reason", message: "must not be blank" }],
    });
  return platformDb.$transaction(async (tx) => {
    const row = await tx.tenant.findUnique({ where: { id: tenantId } });
    if (!row) throw new AppError("not_found", `No tenant ${tenantId}.`);
    if (row.status === "deleted")
      throw new AppError(
        "version_conflict",
        `Tenant ${tenantId} was deleted at ${row.deletedAt?.toISOString()}: its keys are destroyed and it cannot be ${status === "active" ? "reactivated" : "suspended"}.`,
      );
    if (row.status === status) return tenantView(row);
    const updated = await tx.tenant.update({
      where: { id: tenantId },
      data: { status, suspendedAt: status === "suspended" ? new Date() : null },
    });
    await writeAsTenant(tx, tenantId);
    await appendAuditEntry(
      tx,
      tenantAuditEntry(status === "suspended" ? "tenant.suspended" : "tenant.reactivated", tenantId, actor, {
        reason: why,
      }),
    );
    return tenantView(updated);
  });
}

/**
 * The last step of deleting a tenant (lib/use-cases/tenants/delete-tenant.ts):
 * a suspended tenant, whose keys are destroyed, becomes `deleted` for good,
 * its row keeping the deletion record, and `tenant.deleted` joins its own
 * chain, in one transaction. Guarded on "still suspended", so two deletions
 * at once record one.
 */
export async function recordTenantDeletion(
  platformDb: Db,
  tenantId: string,
  record: Record<string, unknown>,
  actor: AuditActor,
): Promise<TenantView> {
  return platformDb.$transaction(async (tx) => {
    const deletedAt = new Date();
    const changed = await tx.tenant.updateMany({
      where: { id: tenantId, status: "suspended" },
      data: { status: "deleted", deletedAt, deletion: record as Prisma.InputJsonObject },
    });
    const row = await tx.tenant.findUnique({ where: { id: tenantId } });
    if (!row) throw new AppError("not_found", `No tenant ${tenantId}.`);
    if (changed.count === 0)
      throw new AppError(
        "version_conflict",
        row.status === "deleted"
          ? `Tenant ${tenantId} was already deleted at ${row.deletedAt?.toISOString()}.`
          : `Tenant ${tenantId} is ${row.status}, not suspended: it is deleted only after being suspended.`,
      );
    await writeAsTenant(tx, tenantId);
    await appendAuditEntry(tx, tenantAuditEntry("tenant.deleted", tenantId, actor, record));
    return tenantView(row);
  });
}

/** For the rest of the owner's transaction, rows written take `tenantId` (the column defaults read it). */
export async function writeAsTenant(
  tx: Parameters<Parameters<Db["$transaction"]>[0]>[0],
  tenantId: string,
): Promise<void> {
  await tx.$executeRaw`SELECT set_config('verity.tenant_id', ${tenantId}, true)`;
  noteTransactionTenant(tx, tenantId);
}
