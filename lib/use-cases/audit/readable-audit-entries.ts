import type { Db } from "@/lib/db/client";
import type { AuditEntry } from "@/lib/stores/audit-log";
import { openSealedValues } from "@/lib/stores/field-encryption";

/**
 * Audit entries as people read them: confidential values the entry quotes
 * in their sealed form (an instruction's words) opened. The chain covers the
 * stored, sealed form (docs/encryption.md), so exports and verification use
 * the entries as stored and only pages that show them to a person call this.
 */
export async function readableAuditEntries(db: Db, entries: readonly AuditEntry[]): Promise<AuditEntry[]> {
  return Promise.all(entries.map(async (e) => ({ ...e, details: await openSealedValues(db, e.details) })));
}
