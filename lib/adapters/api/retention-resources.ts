import { z } from "zod";
import { dataClasses } from "@/lib/model/retention/data-classes-held";
import type { RetentionTerm } from "@/lib/stores/retention-policies";

/** The wire shape of a tenant's retention term per data class (GET/PUT /api/v1/retention/policies/{class}). */
export const RetentionTermSchema = z.object({
  data_class: z.enum(dataClasses),
  keep_days: z
    .int()
    .nullable()
    .meta({ description: "Days a finished task's data of the class is kept; null: forever." }),
  version: z
    .int()
    .min(0)
    .meta({ description: "Compare-and-swap target: send it back as expected_version or If-Match. 0: never set." }),
  updated_by: z.string().nullable(),
  updated_at: z.string().nullable(),
});

export const RetentionPolicyListSchema = z.object({
  items: z.array(RetentionTermSchema),
  is_set: z
    .boolean()
    .meta({ description: "Whether any class has a term; without one, VERITY_TASK_RETENTION_DAYS applies." }),
});

export function retentionTermResource(term: RetentionTerm): z.infer<typeof RetentionTermSchema> {
  return {
    data_class: term.dataClass,
    keep_days: term.keepDays,
    version: term.version,
    updated_by: term.updatedBy,
    updated_at: term.updatedAt?.toISOString() ?? null,
  };
}
