import { tenantOfConnectionOrNull, type Db, type Tx } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { AppError } from "@/lib/core/errors";
import { isSealed, open, parseSealed, seal } from "@/lib/core/envelope-encryption";
import { encryptionAtRestOn } from "@/lib/config/keyring";
import { activeDataKey, dataKeyById } from "@/lib/stores/data-keys";

/**
 * Sealing and opening confidential values for the stores that hold them
 * (docs/encryption.md). A store seals a value before it writes it and opens
 * it when it reads it; nothing above the stores sees a sealed value, and
 * nothing below them (the database, its files, its backups) sees the
 * plaintext.
 *
 * The context names the value's place (`<table>.<column>:<row id>`): a
 * sealed value moved to another row does not open there.
 */

/**
 * The tenant whose key seals a value written on this connection: its
 * row-level-security setting, the same one the row's tenant_id defaults to
 * (so a tenant's value is sealed under its own key, and deleting the tenant
 * shreds it); the first tenant's on the owner's connection, which has none.
 */
async function connectionTenant(db: Db | Tx): Promise<string> {
  return (await tenantOfConnectionOrNull(db)) ?? DEFAULT_TENANT_ID;
}

/** The value as it is to be stored: sealed when encryption at rest is on, else as given. */
export async function sealText(db: Db | Tx, context: string, plaintext: string, tenantId?: string): Promise<string> {
  if (!encryptionAtRestOn()) return plaintext;
  const key = await activeDataKey(db, tenantId ?? (await connectionTenant(db)));
  return seal(key.key, key.id, context, plaintext);
}

/**
 * The plaintext of a stored value. A value stored in the clear (before
 * encryption was on, or with it off) is returned as it is. A sealed value
 * whose key is gone is AppError key_unavailable; one that was altered or
 * belongs to another place is invariant_violated (sealed_value_intact).
 */
export async function openText(db: Db | Tx, stored: string, expectedContext?: string): Promise<string> {
  if (!isSealed(stored)) return stored;
  const parts = parseSealed(stored);
  if (!parts) return stored;
  const key = await dataKeyById(db, parts.keyId);
  try {
    return open(key.key, parts, expectedContext);
  } catch (error) {
    throw new AppError("invariant_violated", `A sealed value does not open: ${(error as Error).message}.`, {
      violations: [
        {
          invariant: "sealed_value_intact",
          message: "a stored value sealed at rest was altered, or was found outside the place it was sealed for",
        },
      ],
    });
  }
}

/**
 * A JSON value as it is to be stored in a jsonb column: sealed whole, as one
 * JSON string holding the envelope, when encryption at rest is on (the
 * column's type does not change, and a reader tells the two apart by the
 * envelope's prefix); else as given. Null and undefined stay what they are:
 * "no value" is not confidential, and readers test for it.
 */
export async function sealJson<T>(db: Db | Tx, context: string, value: T, tenantId?: string): Promise<T | string> {
  if (value === null || value === undefined || !encryptionAtRestOn()) return value;
  return sealText(db, context, JSON.stringify(value), tenantId);
}

/** The value a jsonb column held, opened (sealJson's reverse); a value stored in the clear is returned as it is. */
export async function openJson(db: Db | Tx, stored: unknown, expectedContext?: string): Promise<unknown> {
  if (!isSealed(stored)) return stored;
  return JSON.parse(await openText(db, stored, expectedContext)) as unknown;
}

/**
 * openJson for what a person or a caller reads (pages, API answers,
 * exports): a value that no longer opens (its key destroyed by retention or
 * a tenant's deletion, or altered) is shown as why, in words, so that one
 * shredded value never takes the page or the export down with it. The
 * engine's own decisions use openJson, which fails instead of guessing.
 */
export async function readableJson(db: Db | Tx, stored: unknown, expectedContext?: string): Promise<unknown> {
  if (!isSealed(stored)) return stored;
  return unreadableOr(() => openJson(db, stored, expectedContext));
}

/** openText's counterpart of readableJson. */
export async function readableText(db: Db | Tx, stored: string, expectedContext?: string): Promise<string> {
  if (!isSealed(stored)) return stored;
  return unreadableOr(() => openText(db, stored, expectedContext));
}

/**
 * A JSON value with every sealed string in it opened (each with the context
 * it carries): for records that quote a sealed value, such as an audit
 * entry's details, when they are shown to someone allowed to read them.
 */
export async function openSealedValues<T>(db: Db | Tx, value: T): Promise<T> {
  if (isSealed(value)) return (await openOrSay(db, value)) as T;
  if (Array.isArray(value)) return (await Promise.all(value.map((v) => openSealedValues(db, v)))) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const entries = await Promise.all(
      Object.entries(value as Record<string, unknown>).map(
        async ([k, v]) => [k, await openSealedValues(db, v)] as const,
      ),
    );
    return Object.fromEntries(entries) as T;
  }
  return value;
}

/**
 * A record that quotes a value stays readable when that value no longer
 * opens (its key destroyed by retention or a tenant's deletion): the value
 * is replaced by why, in words, and the rest of the record is shown.
 */
async function openOrSay(db: Db | Tx, sealed: string): Promise<unknown> {
  // A quoted JSON value (an execution's evidence in its audit entry) was sealed as its JSON text.
  return unreadableOr(async () => {
    const text = await openText(db, sealed);
    return sealedJsonContext(parseSealed(sealed)?.context) ? (JSON.parse(text) as unknown) : text;
  });
}

async function unreadableOr<T>(read: () => Promise<T>): Promise<T | string> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof AppError) return `[sealed value, unreadable: ${error.message}]`;
    throw error;
  }
}

/**
 * The places whose values are JSON sealed whole (sealJson), by
 * `<table>.<column>`: openSealedValues gives back the JSON value, not its
 * text, for an audit entry that quotes one.
 */
const sealedJsonColumns = new Set([
  "executions.request",
  "executions.result",
  "executions.evidence",
  "execution_events.evidence",
  "effect_lookups.answer",
  "divergence_alerts.internal",
  "divergence_alerts.external",
  "divergence_alerts.reconciled",
]);

function sealedJsonContext(context: string | undefined): boolean {
  return context !== undefined && sealedJsonColumns.has(context.slice(0, context.indexOf(":")));
}
