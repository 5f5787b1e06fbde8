import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { getKeyProvider } from "@/lib/config/keyring";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { destroyDataKeys, listDataKeys } from "@/lib/stores/data-keys";
import { findTenant, recordTenantDeletion, setTenantStatus, type TenantView } from "@/lib/stores/tenants";

/**
 * Deleting a tenant by crypto-shredding (docs/tenants.md, "Deleting a
 * tenant"): its data keys are destroyed in the database and its
 * key-encryption keys at the key provider, so every value sealed for it —
 * instruction words, a refund's customer, reviewers' reasons, in every table,
 * replica and backup — never opens again. The register keeps a deletion
 * record that outlives the keys: which keys (ids, versions, KEK ids), how
 * many rows the tenant had per table, who, when and why.
 *
 * The rows stay, on purpose. Shredding is what reaches the backups, which
 * a DELETE never does; what remains readable is only what was never sealed
 * (ids, states, times, counts), and the tenant's audit chain still verifies
 * (it hashes the sealed form), so the deletion itself stays provable. A
 * purge of the rows is a separate step (not built).
 *
 * Refused for the first tenant (it holds everything from before tenants,
 * and provider webhooks settle into it), for a tenant already deleted, and
 * while any legal hold of the tenant is in force: a hold freezes deletion of
 * all its data, and this deletes all of it.
 */

export interface TenantDeletion {
  tenant: TenantView;
  record: TenantDeletionRecord;
}

export interface TenantDeletionRecord {
  reason: string;
  deleted_by: string;
  data_keys: Array<{ id: string; version: number; kek_id: string }>;
  key_provider: string;
  /** Rows the tenant had per table when its keys went; they stay, their sealed values unreadable. */
  rows_left: Record<string, number>;
  sealed_values: string;
}

const sealedValuesStatement =
  "every value sealed under these keys is unreadable from now on, in this database, its replicas and every backup of it; " +
  "a backup of the keyring taken before this deletion still holds the tenant's key-encryption keys and must be destroyed too";

export async function deleteTenant(
  databases: { platformDb: Db; forTenant(tenantId: string): Db },
  input: { id: string; reason: string },
  actor: AuditActor,
): Promise<TenantDeletion> {
  const reason = input.reason.trim();
  if (!reason)
    throw new AppError("validation_failed", "Say why the tenant is deleted.", {
      errors: [{ field: "reason", message: "must not be blank" }],
    });
  if (input.id === DEFAULT_TENANT_ID)
    throw new AppError(
      "forbidden",
      `The first tenant (${DEFAULT_TENANT_ID}) cannot be deleted: it holds the data from before tenants and the provider webhooks settle into it.`,
    );
  const { platformDb } = databases;
  const existing = await findTenant(platformDb, input.id);
  if (!existing) throw new AppError("not_found", `No tenant ${input.id}.`);
  if (existing.status === "deleted")
    throw new AppError("version_conflict", `Tenant ${input.id} was already deleted at ${existing.deleted_at}.`);
  const db = databases.forTenant(input.id);

  await refuseUnderHold(db, input.id, "nothing was changed");
  // Suspended first: its people, agents and background loop stop, so no new hold or sealed value arrives meanwhile.
  if (existing.status === "active") await setTenantStatus(platformDb, input.id, "suspended", reason, actor);
  // A hold placed by a request already past its check before the suspension: seen here, before anything is destroyed.
  await refuseUnderHold(db, input.id, "the tenant was suspended and nothing else was changed");

  const keys = await listDataKeys(db, input.id);
  const record: TenantDeletionRecord = {
    reason,
    deleted_by: actor.identity,
    data_keys: keys.map((k) => ({ id: k.id, version: k.version, kek_id: k.kekId })),
    key_provider: getKeyProvider().name,
    rows_left: await countTenantRows(platformDb, input.id),
    sealed_values: sealedValuesStatement,
  };
  await destroyDataKeys(db, input.id, actor);
  const tenant = await recordTenantDeletion(platformDb, input.id, { ...record }, actor);
  return { tenant, record };
}

async function refuseUnderHold(db: Db, tenantId: string, outcome: string): Promise<void> {
  const holds = await db.auditLegalHold.findMany({ where: { releasedAt: null }, select: { id: true }, take: 5 });
  if (holds.length > 0)
    throw new AppError(
      "invariant_violated",
      `Tenant ${tenantId} is under legal hold (${holds.map((h) => h.id).join(", ")}): deleting it would delete held data; ${outcome}.`,
      { violations: [{ invariant: "legal_hold", message: "a legal hold freezes deletion of the tenant's data" }] },
    );
}

/** Rows per table that carry the tenant's id (read on the owner's connection, which sees every tenant). */
async function countTenantRows(platformDb: Db, tenantId: string): Promise<Record<string, number>> {
  const tables = await platformDb.$queryRaw<Array<{ table_name: string }>>`
    SELECT c.table_name FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND t.table_type = 'BASE TABLE'
     ORDER BY c.table_name`;
  const counts: Record<string, number> = {};
  for (const { table_name } of tables) {
    // The name comes from the catalog, quoted as an identifier; the tenant is a parameter.
    const [row] = await platformDb.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM "${table_name.replaceAll('"', '""')}" WHERE tenant_id = $1`,
      tenantId,
    );
    if (row && row.n > 0) counts[table_name] = row.n;
  }
  return counts;
}
