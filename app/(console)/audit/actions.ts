"use server";

import { z } from "zod";
import type { FormAction } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import type { AppError } from "@/lib/core/errors";
import { addAnnotation } from "@/lib/use-cases/audit/annotate-audit-entry";
import type { AnnotationFormState } from "@/lib/adapters/console/audit/annotation-form";
import { consoleDb } from "@/lib/adapters/auth/session";

/**
 * A person's correction of an audit entry, from a task's history
 * (/tasks/[id]/history, which names the task: the entry must be one of its
 * own) or the audit log (/audit). audit:annotate is checked here, whatever
 * the page showed; the annotation is written through
 * lib/use-cases/audit/annotate-audit-entry.ts, as an entry of the log.
 */

// The engine judges the fields (its words name them), so the form passes them on as typed.
const AnnotateFormSchema = z.object({
  entryId: z.string().default(""),
  note: z.string().default(""),
  taskId: z
    .string()
    .optional()
    .transform((v) => (v ? v : undefined)),
});

const fieldNames: Record<string, string> = { entry_id: "entryId", note: "note" };

export const annotateEntryAction: FormAction<AnnotationFormState> = sessionFormAction({
  name: "annotateEntryAction",
  permission: "audit:annotate",
  schema: AnnotateFormSchema,
  errorState: (message: string, error?: AppError): AnnotationFormState => {
    const fields: Record<string, string> = {};
    for (const e of error?.details.errors ?? []) fields[fieldNames[e.field] ?? e.field] = e.message;
    // The standard refusals (session ended, not allowed) already say that nothing was added.
    const judged = error?.code === "validation_failed" || error?.code === "not_found";
    return { status: "error", message: judged ? `Nothing was added: ${message}` : message, fields };
  },
  nothingWas: "added",
  async run({ entryId, note, taskId }, { actor }) {
    const entry = await addAnnotation(await consoleDb(), { entry_id: entryId, note, task_id: taskId }, actor);
    return {
      status: "done",
      annotationId: entry.id,
      message: `Annotation ${entry.id} added to ${entry.stream} (seq ${entry.seq}), bound to the entry it corrects; the entry itself is unchanged.`,
    };
  },
});
