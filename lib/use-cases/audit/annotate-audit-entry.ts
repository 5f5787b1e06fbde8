import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { parseOrThrow } from "@/lib/core/validation";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { annotateAuditEntry, getAuditEntry, type AuditEntry } from "@/lib/stores/audit-log";

/**
 * A person's correction of the record: an annotation.added entry appended to
 * the stream of the entry it corrects, bound to that entry by id, seq and
 * hash (lib/stores/audit-log.ts annotateAuditEntry). The original is never
 * edited. Allowed under a legal hold — a hold freezes deletion, not the
 * record's growth — and, being an entry itself, it is verified, searched and
 * exported with the rest of the log. What the console's history and audit
 * pages and POST /api/v1/audit/entries/{id}/annotations call.
 */

export const AddAnnotationInputSchema = z.strictObject({
  entry_id: z.string().trim().min(1, "name the audit entry to annotate").max(64),
  note: z
    .string()
    .trim()
    .min(1, "write what is wrong with the entry and what is right: a blank annotation corrects nothing")
    .max(2000, "at most 2,000 characters"),
  /** What the entry should have said, field by field (JSON). */
  correction: z.record(z.string(), z.unknown()).optional(),
  /** The task whose history the person is reading: the entry must be one of its entries. */
  task_id: z.string().min(1).max(128).optional(),
});
export type AddAnnotationInput = z.input<typeof AddAnnotationInputSchema>;

export async function addAnnotation(db: Db, raw: AddAnnotationInput, actor: AuditActor): Promise<AuditEntry> {
  // People correct the record; an agent whose work the log records does not amend it.
  if (actor.kind !== "user")
    throw new AppError(
      "forbidden",
      "Annotations are people's corrections of the record: sign in to the console as a person to add one.",
    );
  const input = parseOrThrow(AddAnnotationInputSchema, raw);
  const target = await getAuditEntry(db, input.entry_id);
  if (!target)
    throw new AppError("not_found", `Audit entry ${input.entry_id} does not exist (or retention has removed it).`, {
      errors: [{ field: "entry_id", message: "no audit entry has this id" }],
    });
  if (input.task_id !== undefined && target.taskId !== input.task_id)
    throw new AppError("validation_failed", `entry_id: entry ${target.id} is not an entry of task ${input.task_id}.`, {
      errors: [{ field: "entry_id", message: `not an entry of task ${input.task_id}` }],
    });
  return annotateAuditEntry(db, { entry_id: target.id, note: input.note, correction: input.correction }, actor);
}
