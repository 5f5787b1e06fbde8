import { createHmac } from "node:crypto";
import type { Db, Tx } from "@/lib/db/client";
import { encryptionAtRestOn } from "@/lib/config/keyring";
import { activeDataKey, dataKeyById, listDataKeys, type UsableDataKey } from "@/lib/stores/data-keys";

/**
 * Keyed blind indexes of sealed values (docs/search.md): what lets the
 * global search find a call by its customer although the request naming the
 * customer is sealed at rest. The index is an HMAC of the value under a key
 * derived from the tenant's data key, stored as "<data key id>:<hex>": equal
 * values under one key give equal indexes, nothing else can be read from it,
 * and destroying the tenant's keys (its deletion) leaves no way to compute
 * one again. A rotation starts new indexes under the new key; a search
 * computes one candidate per live key, a handful, never a scan of rows.
 *
 * With encryption at rest off nothing is sealed and no index is written: the
 * search compares the request in the clear instead.
 */

/** Which value an index is of: part of the HMAC's input, so one customer's index is not another field's. */
type BlindIndexedField = "customer_id";

function indexWith(key: UsableDataKey, field: BlindIndexedField, value: string): string {
  // A sub-key for indexes alone: the data key itself only ever seals.
  const indexKey = createHmac("sha256", key.key).update("verity.blind-index.v1").digest();
  return `${key.id}:${createHmac("sha256", indexKey).update(`${field}\u0000${value}`, "utf8").digest("hex")}`;
}

/** The index a new row stores for `value` (under the tenant's active key), or null when nothing is sealed. */
export async function blindIndexOf(
  db: Db | Tx,
  tenantId: string,
  field: BlindIndexedField,
  value: unknown,
): Promise<string | null> {
  if (!encryptionAtRestOn() || typeof value !== "string" || value === "") return null;
  return indexWith(await activeDataKey(db, tenantId), field, value);
}

/** The indexes `value` may be stored under: one per data key of the tenant still held (destroyed ones index nothing). */
export async function blindIndexCandidates(
  db: Db | Tx,
  tenantId: string,
  field: BlindIndexedField,
  value: string,
): Promise<string[]> {
  const keys = (await listDataKeys(db, tenantId)).filter((k) => k.destroyedAt === null);
  const usable = await Promise.all(keys.map((k) => dataKeyById(db, k.id)));
  return usable.map((key) => indexWith(key, field, value));
}
