import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { dataClasses, type DataClass } from "@/lib/model/retention/data-classes-held";
import { appendAuditEntry } from "@/lib/stores/audit-log";

/**
 * The owner of `retention_policies`: how long the connection's tenant keeps
 * finished tasks' data of each class (docs/retention.md). One row per class
 * with a term; a class without one is kept forever. Each change is audited
 * (`retention.policy_set`, in the tenant's system chain) in the same
 * transaction, with the term before and after.
 */

export interface RetentionPolicy {
  /** Days a finished task's data of each class is kept after its last activity; null = forever. */
  terms: Record<DataClass, number | null>;
  /** Whether the tenant has any term at all: without one, VERITY_TASK_RETENTION_DAYS applies as before. */
  isSet: boolean;
  /** The latest change (who, when), or null. */
  updatedBy: string | null;
  updatedAt: Date | null;
}

export const RetentionTermInputSchema = z.strictObject({
  data_class: z.enum(dataClasses),
  /** Whole days; null clears the term (the class is then kept forever). */
  keep_days: z.number().int().min(1).max(36_500).nullable(),
});
export type RetentionTermInput = z.input<typeof RetentionTermInputSchema>;

export async function getRetentionPolicy(db: Db | Tx): Promise<RetentionPolicy> {
  const rows = await db.retentionPolicy.findMany({ orderBy: { updatedAt: "desc" } });
  const terms = Object.fromEntries(dataClasses.map((c) => [c, null])) as Record<DataClass, number | null>;
  for (const row of rows)
    if ((dataClasses as readonly string[]).includes(row.dataClass)) terms[row.dataClass as DataClass] = row.keepDays;
  return {
    terms,
    isSet: rows.length > 0,
    updatedBy: rows[0]?.updatedBy ?? null,
    updatedAt: rows[0]?.updatedAt ?? null,
  };
}

/** Sets (or clears, with keep_days null) one class's term; a change to the same term writes nothing. */
export async function setRetentionTerm(
  db: Db,
  rawInput: RetentionTermInput,
  actor: AuditActor,
): Promise<RetentionPolicy> {
  const input = parseOrThrow(RetentionTermInputSchema, rawInput);
  return db.$transaction(async (tx) => {
    // The class's row locked (when it exists), so two changes at once are recorded one after the other, each with the term it replaced.
    const before = await tx.$queryRaw<Array<{ keep_days: number }>>`
      SELECT keep_days FROM retention_policies WHERE data_class = ${input.data_class} FOR UPDATE`;
    const previous = before[0]?.keep_days ?? null;
    if (previous === input.keep_days) return getRetentionPolicy(tx);
    if (input.keep_days === null) await tx.retentionPolicy.deleteMany({ where: { dataClass: input.data_class } });
    else
      await tx.$executeRaw`
        INSERT INTO retention_policies (data_class, keep_days, updated_by, updated_at)
        VALUES (${input.data_class}, ${input.keep_days}, ${actor.identity}, now())
        ON CONFLICT (tenant_id, data_class) DO UPDATE
           SET keep_days = EXCLUDED.keep_days, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`;
    await appendAuditEntry(tx, {
      action: "retention.policy_set",
      actor,
      subject: { type: "retention_policy", id: input.data_class },
      details: { data_class: input.data_class, keep_days: input.keep_days, previous_keep_days: previous },
    });
    return getRetentionPolicy(tx);
  });
}
