import { randomBytes } from "node:crypto";
import type { Db, Tx } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { DATA_KEY_BYTES } from "@/lib/core/envelope-encryption";
import { newId } from "@/lib/core/ids";
import { getKeyProvider, type KeyProvider } from "@/lib/config/keyring";
import type { DataKey } from "@/lib/generated/prisma/client";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { dataKeysAuditEntry } from "@/lib/model/audit/audit-events";
import { appendAuditEntry, auditEntryInsertSql } from "@/lib/stores/audit-log";

/**
 * The owner of `data_keys`: each tenant's data keys, stored wrapped by the
 * key provider's key-encryption key (KEK). The highest live version seals
 * new values; every version opens what it sealed until it is destroyed.
 *
 * Unwrapped keys are cached per process by id: a data key never changes
 * (a rotation adds a version, a KEK rotation re-wraps the same key bytes),
 * so the cache can only be wrong after a destruction, which clears it in
 * this process. Other processes (the other servers of a scaled-out
 * deployment, docs/scale-out.md) learn of it when their cached key is
 * checked against its row again, at most KEY_RECHECK_MS after they last
 * did: then the key is dropped and what it sealed stops opening there too.
 * The active key is looked up again after a rotation in this process and,
 * in other processes, after ACTIVE_KEY_TTL_MS: until then they keep sealing
 * under the previous version, which stays readable, so nothing is lost.
 */

const ACTIVE_KEY_TTL_MS = 60_000;
const KEY_RECHECK_MS = 60_000;

export interface UsableDataKey {
  id: string;
  tenantId: string;
  version: number;
  key: Buffer;
}

const keysById = new Map<string, UsableDataKey & { checkedUntil: number }>();
const activeByTenant = new Map<string, { key: UsableDataKey; until: number }>();

/**
 * Forgets every unwrapped key this process holds, so the next use unwraps
 * again through the key provider: what a new process sees (tests use it to
 * check that sealed values open from the keyring alone).
 */
export function forgetUnwrappedDataKeys(): void {
  keysById.clear();
  activeByTenant.clear();
}

function provider(): KeyProvider {
  return getKeyProvider();
}

/** The key new values of the tenant are sealed with; made (version 1) on the tenant's first sealed value. */
export async function activeDataKey(db: Db | Tx, tenantId: string): Promise<UsableDataKey> {
  const cached = activeByTenant.get(tenantId);
  if (cached && cached.until > Date.now()) return cached.key;
  let row = await liveHead(db, tenantId);
  if (!row) row = await createFirstKey(db, tenantId);
  const key = await usable(row);
  activeByTenant.set(tenantId, { key, until: Date.now() + ACTIVE_KEY_TTL_MS });
  return key;
}

/** The key a sealed value names. */
export async function dataKeyById(db: Db | Tx, id: string): Promise<UsableDataKey> {
  const cached = keysById.get(id);
  if (cached && cached.checkedUntil > Date.now()) return cached;
  // Not cached, or cached long enough that another server may have destroyed it since.
  if (cached) keysById.delete(id);
  const row = await db.dataKey.findUnique({ where: { id } });
  // Not a key that is missing: no key of that id was ever made here, so the value was altered or is not this database's.
  if (!row)
    throw new AppError("invariant_violated", `A sealed value names data key ${id}, which this database never had.`, {
      violations: [{ invariant: "sealed_value_intact", message: `no data key ${id} in this database` }],
    });
  return usable(row);
}

async function liveHead(db: Db | Tx, tenantId: string): Promise<DataKey | null> {
  return db.dataKey.findFirst({
    where: { tenantId, retiredAt: null, destroyedAt: null },
    orderBy: { version: "desc" },
  });
}

/**
 * Two processes sealing a tenant's first value at once both make a key; the
 * unique (tenant, version) keeps one, and the other process uses it.
 */
async function createFirstKey(db: Db | Tx, tenantId: string): Promise<DataKey> {
  const destroyed = await db.dataKey.findFirst({ where: { tenantId, destroyedAt: { not: null } } });
  if (destroyed)
    throw new AppError(
      "key_unavailable",
      `The data keys of tenant ${tenantId} were destroyed at ${destroyed.destroyedAt?.toISOString()}.`,
    );
  const bytes = randomBytes(DATA_KEY_BYTES);
  const { kekId, wrapped } = await provider().wrap(tenantId, bytes);
  const id = newId("dk");
  // One statement, so the key and its audit entry are written together inside
  // or outside the caller's transaction; the entry only when this insert won.
  const created = dataKeysAuditEntry("keys.data_key_created", tenantId, systemKeysActor, {
    key_id: id,
    version: 1,
    kek_id: kekId,
  });
  await db.$executeRaw`
    WITH inserted AS (
      INSERT INTO data_keys (id, tenant_id, version, kek_id, wrapped_key)
      VALUES (${id}, ${tenantId}, 1, ${kekId}, ${wrapped})
      ON CONFLICT (tenant_id, version) DO NOTHING
      RETURNING 1
    )
    ${auditEntryInsertSql(created, { onlyIfRowsIn: "inserted" })}`;
  const row = await liveHead(db, tenantId);
  if (!row) throw new AppError("key_unavailable", `No live data key for tenant ${tenantId}.`);
  return row;
}

const systemKeysActor: AuditActor = { identity: "spiffe://verity.local/system/keys", kind: "system" };

async function usable(row: DataKey): Promise<UsableDataKey> {
  const known = keysById.get(row.id);
  if (known && row.wrappedKey) return known;
  if (!row.wrappedKey)
    throw new AppError(
      "key_unavailable",
      `Data key ${row.id} of tenant ${row.tenantId} was destroyed at ${row.destroyedAt?.toISOString()}: what it sealed cannot be read.`,
    );
  const key = {
    id: row.id,
    tenantId: row.tenantId,
    version: row.version,
    key: await provider().unwrap(row.tenantId, row.kekId, row.wrappedKey),
  };
  keysById.set(row.id, { ...key, checkedUntil: Date.now() + KEY_RECHECK_MS });
  return key;
}

export interface DataKeyStatus {
  id: string;
  version: number;
  kekId: string;
  createdAt: Date;
  retiredAt: Date | null;
  destroyedAt: Date | null;
  /** The key new values are sealed with. */
  active: boolean;
}

/** The tenant's data keys, newest first, without key material. */
export async function listDataKeys(db: Db | Tx, tenantId: string): Promise<DataKeyStatus[]> {
  const rows = await db.dataKey.findMany({ where: { tenantId }, orderBy: { version: "desc" } });
  const head = rows.find((r) => !r.retiredAt && !r.destroyedAt);
  return rows.map((r) => ({
    id: r.id,
    version: r.version,
    kekId: r.kekId,
    createdAt: r.createdAt,
    retiredAt: r.retiredAt,
    destroyedAt: r.destroyedAt,
    active: r.id === head?.id,
  }));
}

/**
 * A new data key version for the tenant's new values. The previous one is
 * retired: it seals nothing more and still opens what it sealed. Without
 * downtime: a process that has not yet seen the new version seals under the
 * retired one, which every process can still open.
 */
export async function rotateDataKey(db: Db, tenantId: string, actor: AuditActor): Promise<DataKeyStatus> {
  const bytes = randomBytes(DATA_KEY_BYTES);
  const { kekId, wrapped } = await provider().wrap(tenantId, bytes);
  const row = await db.$transaction(async (tx) => {
    // The head row locked: two rotations at once make two versions one after the other, never a gap or a twin.
    const head = await tx.$queryRaw<Array<{ id: string; version: number }>>`
      SELECT id, version FROM data_keys WHERE tenant_id = ${tenantId} ORDER BY version DESC LIMIT 1 FOR UPDATE`;
    const previous = head[0];
    if (previous)
      await tx.dataKey.updateMany({ where: { tenantId, retiredAt: null }, data: { retiredAt: new Date() } });
    const created = await tx.dataKey.create({
      data: { id: newId("dk"), tenantId, version: (previous?.version ?? 0) + 1, kekId, wrappedKey: wrapped },
    });
    await appendAuditEntry(
      tx,
      dataKeysAuditEntry("keys.data_key_rotated", tenantId, actor, {
        key_id: created.id,
        version: created.version,
        kek_id: kekId,
        retired_key_id: previous?.id ?? null,
      }),
    );
    return created;
  });
  activeByTenant.delete(tenantId);
  return (await listDataKeys(db, tenantId)).find((k) => k.id === row.id)!;
}

/**
 * A new key-encryption key at the provider, then every live data key of the
 * tenant re-wrapped under it, so the old KEK can be retired at the provider.
 * The data keys' bytes do not change: nothing sealed needs re-encrypting.
 */
export async function rotateKeyEncryptionKey(
  db: Db,
  tenantId: string,
  actor: AuditActor,
): Promise<{ kekId: string; rewrapped: number }> {
  const rows = await db.dataKey.findMany({ where: { tenantId, destroyedAt: null } });
  const keys = await Promise.all(rows.map(usable));
  const kekId = await provider().rotate(tenantId);
  const rewraps = await Promise.all(keys.map(async (k) => ({ id: k.id, ...(await provider().wrap(tenantId, k.key)) })));
  await db.$transaction(async (tx) => {
    for (const r of rewraps)
      await tx.dataKey.update({ where: { id: r.id }, data: { kekId: r.kekId, wrappedKey: r.wrapped } });
    await appendAuditEntry(
      tx,
      dataKeysAuditEntry("keys.kek_rotated", tenantId, actor, {
        kek_id: kekId,
        rewrapped_key_ids: rewraps.map((r) => r.id),
      }),
    );
  });
  return { kekId, rewrapped: rewraps.length };
}

/**
 * Crypto-shredding: every data key of the tenant is removed from the
 * database and its KEKs from the provider. Whatever they sealed, in every
 * table and in every backup of the database, never opens again (a backup of
 * the keyring taken before this still holds the KEKs: destroy those too; the
 * entry says so).
 */
export async function destroyDataKeys(db: Db, tenantId: string, actor: AuditActor): Promise<{ destroyed: number }> {
  const destroyed = await db.$transaction(async (tx) => {
    const count = await tx.dataKey.updateMany({
      where: { tenantId, destroyedAt: null },
      data: { wrappedKey: null, destroyedAt: new Date() },
    });
    await appendAuditEntry(
      tx,
      dataKeysAuditEntry("keys.destroyed", tenantId, actor, {
        destroyed_keys: count.count,
        note: "the tenant's sealed values are unreadable in this database and its backups; keyring backups taken earlier still hold its key-encryption keys and must be destroyed too",
      }),
    );
    return count.count;
  });
  await provider().destroy(tenantId);
  for (const [id, key] of keysById) if (key.tenantId === tenantId) keysById.delete(id);
  activeByTenant.delete(tenantId);
  return { destroyed };
}
