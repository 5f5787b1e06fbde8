import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { dataClasses, type DataClass } from "@/lib/model/retention/data-classes-held";
import { getRetentionTerm, setRetentionTerm, type RetentionTerm } from "@/lib/stores/retention-policies";

/**
 * A tenant's retention term per data class, as the API and the console
 * change it: always under compare-and-swap on the class's version (0 for a
 * class never set), so two people editing one term never overwrite each
 * other unseen. The write itself, its audit entry and the version are
 * lib/stores/retention-policies.ts's; the caller's permission
 * (audit:retention) is checked by the route or action before this is called.
 */

export const RetentionTermChangeSchema = z.strictObject({
  keep_days: z
    .number()
    .int()
    .min(1)
    .max(36_500)
    .nullable()
    .meta({ description: "Whole days a finished task's data of the class is kept (1–36,500); null: kept forever." }),
  expected_version: z.number().int().min(0).meta({
    description: "The class's version you read (0 for a class never set): 409 and nothing changed if it moved.",
  }),
});

/** The class a path names; an unknown one is not found (as any made-up id is). */
export function dataClassOrThrow(name: string): DataClass {
  if ((dataClasses as readonly string[]).includes(name)) return name as DataClass;
  throw new AppError("not_found", `There is no data class "${name}"; the classes are ${dataClasses.join(", ")}.`);
}

export async function changeRetentionTerm(
  db: Db,
  dataClass: DataClass,
  raw: unknown,
  actor: AuditActor,
): Promise<RetentionTerm> {
  const input = parseOrThrow(RetentionTermChangeSchema, raw);
  await setRetentionTerm(
    db,
    { data_class: dataClass, keep_days: input.keep_days, expected_version: input.expected_version },
    actor,
  );
  return getRetentionTerm(db, dataClass);
}
