import { z } from "zod";
import type { Db, Tx } from "@/lib/db/client";
import { parseOrThrow } from "@/lib/core/validation";
import { AppError } from "@/lib/core/errors";
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
  /** Each class's compare-and-swap version: 0 for a class never set, +1 on each change (a clearing too). */
  versions: Record<DataClass, number>;
  /** Whether the tenant has any term at all: without one, VERITY_TASK_RETENTION_DAYS applies as before. */
  isSet: boolean;
  /** The latest change (who, when), or null. */
  updatedBy: string | null;
  updatedAt: Date | null;
}

/** One class's term, as the API shows it. */
export interface RetentionTerm {
  dataClass: DataClass;
  keepDays: number | null;
  /** 0: never set. */
  version: number;
  updatedBy: string | null;
  updatedAt: Date | null;
}

export const RetentionTermInputSchema = z.strictObject({
  data_class: z.enum(dataClasses),
  /** Whole days; null clears the term (the class is then kept forever). */
  keep_days: z.number().int().min(1).max(36_500).nullable(),
  /**
   * The class's version the change is based on (compare-and-swap; 0 for a
   * class never set). Without it the change is made whatever the current
   * term (the operator's CLI); the API and the console always send it.
   */
  expected_version: z.number().int().min(0).optional(),
});
export type RetentionTermInput = z.input<typeof RetentionTermInputSchema>;

export async function getRetentionPolicy(db: Db | Tx): Promise<RetentionPolicy> {
  const rows = await db.retentionPolicy.findMany({ orderBy: { updatedAt: "desc" } });
  const terms = Object.fromEntries(dataClasses.map((c) => [c, null])) as Record<DataClass, number | null>;
  const versions = Object.fromEntries(dataClasses.map((c) => [c, 0])) as Record<DataClass, number>;
  for (const row of rows)
    if ((dataClasses as readonly string[]).includes(row.dataClass)) {
      terms[row.dataClass as DataClass] = row.keepDays;
      versions[row.dataClass as DataClass] = row.version;
    }
  return {
    terms,
    versions,
    isSet: rows.some((r) => r.keepDays !== null),
    updatedBy: rows[0]?.updatedBy ?? null,
    updatedAt: rows[0]?.updatedAt ?? null,
  };
}

/** Every class's term and version, in the classes' order (a class never set: version 0, forever). */
export async function listRetentionTerms(db: Db | Tx): Promise<RetentionTerm[]> {
  const rows = new Map((await db.retentionPolicy.findMany()).map((r) => [r.dataClass, r]));
  return dataClasses.map((dataClass) => termOf(dataClass, rows.get(dataClass)));
}

function termOf(
  dataClass: DataClass,
  row: { keepDays: number | null; version: number; updatedBy: string; updatedAt: Date } | null | undefined,
): RetentionTerm {
  return {
    dataClass,
    keepDays: row?.keepDays ?? null,
    version: row?.version ?? 0,
    updatedBy: row?.updatedBy ?? null,
    updatedAt: row?.updatedAt ?? null,
  };
}

/** One class's term and version (version 0, forever, when it was never set). */
export async function getRetentionTerm(db: Db | Tx, dataClass: DataClass): Promise<RetentionTerm> {
  return termOf(dataClass, await db.retentionPolicy.findFirst({ where: { dataClass } }));
}

/**
 * Sets (or clears, with keep_days null) one class's term; a change to the
 * same term writes nothing. With `expected_version`, the change is made
 * only if the class is still at that version (version_conflict otherwise,
 * nothing changed): two people editing one term never overwrite each other
 * unseen.
 */
export async function setRetentionTerm(
  db: Db,
  rawInput: RetentionTermInput,
  actor: AuditActor,
): Promise<RetentionPolicy> {
  const input = parseOrThrow(RetentionTermInputSchema, rawInput);
  return db.$transaction(async (tx) => {
    // The class's row locked (when it exists), so two changes at once are recorded one after the other, each with the term it replaced.
    const before = await tx.$queryRaw<Array<{ keep_days: number | null; version: number }>>`
      SELECT keep_days, version FROM retention_policies WHERE data_class = ${input.data_class} FOR UPDATE`;
    const previous = before[0]?.keep_days ?? null;
    const version = before[0]?.version ?? 0;
    if (input.expected_version !== undefined && input.expected_version !== version)
      throw new AppError(
        "version_conflict",
        `The ${input.data_class} term is at version ${version}${previous === null ? " (kept forever)" : ` (${previous} days)`}, not ${input.expected_version}: it changed since you read it. Read it again and decide.`,
        { data_class: input.data_class, current_version: version, keep_days: previous },
      );
    if (previous === input.keep_days) return getRetentionPolicy(tx);
    // Upserted, never deleted: a cleared term keeps its row (keep_days null) and its version counts on.
    await tx.$executeRaw`
      INSERT INTO retention_policies (data_class, keep_days, version, updated_by, updated_at)
      VALUES (${input.data_class}, ${input.keep_days}, 1, ${actor.identity}, now())
      ON CONFLICT (tenant_id, data_class) DO UPDATE
         SET keep_days = EXCLUDED.keep_days, version = retention_policies.version + 1,
             updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at`;
    await appendAuditEntry(tx, {
      action: "retention.policy_set",
      actor,
      subject: { type: "retention_policy", id: input.data_class },
      details: {
        data_class: input.data_class,
        keep_days: input.keep_days,
        previous_keep_days: previous,
        version: version + 1,
      },
    });
    return getRetentionPolicy(tx);
  });
}
