"use server";

import { z } from "zod";
import { formIncompleteMessage, type FormAction, type FormActionSpec } from "@/lib/adapters/actions/form-action";
import { sessionFormAction } from "@/lib/adapters/actions/session-form-action";
import { applyAuditRetention, placeLegalHold, releaseLegalHold } from "@/lib/use-cases/audit/audit-retention";
import { applyTaskRetention } from "@/lib/use-cases/retention/apply-task-retention";
import { changeRetentionTerm, dataClassOrThrow } from "@/lib/use-cases/retention/retention-terms";
import type { AppError } from "@/lib/core/errors";
import {
  ApplyRetentionFormSchema,
  ApplyTaskRetentionFormSchema,
  PlaceHoldFormSchema,
  SetRetentionTermFormSchema,
  keepDaysOfForm,
  utcInstantFromLocalInput,
} from "@/lib/adapters/console/retention/retention";
import type { RetentionFormState } from "@/lib/adapters/console/retention/retention-form";
import { consoleDb } from "@/lib/adapters/auth/session";

/**
 * The retention page's writes. Each checks audit:retention itself (a page
 * that showed the form proves nothing about who submits it) and goes through
 * lib/use-cases/audit/audit-retention.ts, which records the audit entry in the same
 * transaction.
 */

/** The engine's field errors, by field, shown beside each input. */
function fieldsOf(error?: AppError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const e of error?.details.errors ?? []) fields[e.field] = e.message;
  return fields;
}

/** What every retention form shares: the permission, the state's shape, and a refused field named as such. */
const retentionForm = {
  permission: "audit:retention",
  errorState: (message: string, error?: AppError): RetentionFormState =>
    error?.code === "validation_failed"
      ? { status: "error", message: `Nothing was changed: ${message}`, fields: fieldsOf(error) }
      : { status: "error", message, fields: {} },
} satisfies Partial<FormActionSpec<z.ZodType, RetentionFormState>>;

export const placeHoldAction: FormAction<RetentionFormState> = sessionFormAction({
  ...retentionForm,
  name: "placeHoldAction",
  schema: PlaceHoldFormSchema,
  invalid: () => ({ status: "error", message: formIncompleteMessage, fields: {} }),
  async run({ taskId, from, to, reason }, { actor }) {
    const hold = await placeLegalHold(
      await consoleDb(),
      { task_id: taskId, from: utcInstantFromLocalInput(from), to: utcInstantFromLocalInput(to), reason },
      actor,
    );
    return {
      status: "done",
      message: `Legal hold ${hold.id} placed. Retention will not delete what it covers until it is released.`,
    };
  },
});

// The reason is judged by the engine (its words name the field), so the form passes it through as typed.
const ReleaseHoldFormSchema = z.object({ holdId: z.string().default(""), reason: z.string().default("") });

export const releaseHoldAction: FormAction<RetentionFormState> = sessionFormAction({
  ...retentionForm,
  name: "releaseHoldAction",
  schema: ReleaseHoldFormSchema,
  async run({ holdId, reason }, { actor }) {
    const hold = await releaseLegalHold(await consoleDb(), holdId, reason, actor);
    return { status: "done", message: `Legal hold ${hold.id} released.` };
  },
  answer: (error) =>
    error.code === "version_conflict"
      ? { status: "conflict", message: `${error.message} Nothing was changed.` }
      : undefined,
});

export const applyRetentionAction: FormAction<RetentionFormState> = sessionFormAction({
  ...retentionForm,
  name: "applyRetentionAction",
  schema: ApplyRetentionFormSchema,
  invalid(issues) {
    const fields: Record<string, string> = {};
    for (const issue of issues) {
      const field = String(issue.path[0] ?? "");
      fields[field] ??=
        field === "confirm"
          ? "Tick the box to confirm that old entries are deleted."
          : "A whole number of days, at least 1.";
    }
    return { status: "error", message: "Nothing was deleted: check the fields below.", fields };
  },
  async run({ days }, { actor }) {
    const result = await applyAuditRetention(await consoleDb(), { olderThanDays: days }, actor);
    const deleted = result.cuts.reduce((n, c) => n + c.deleted, 0);
    const held = result.heldStreams.length
      ? ` ${result.heldStreams.length} stream(s) kept older entries under a legal hold.`
      : "";
    return {
      status: "done",
      message:
        result.entry === null
          ? `Nothing was older than ${days} days (before ${result.cutoff.toISOString()}) outside a legal hold: nothing deleted, nothing recorded.${held}`
          : `Deleted ${deleted} entries older than ${days} days from ${result.cuts.length} stream(s); each stream now starts at an anchor.${held}`,
    };
  },
});

export const applyTaskRetentionAction: FormAction<RetentionFormState> = sessionFormAction({
  ...retentionForm,
  name: "applyTaskRetentionAction",
  schema: ApplyTaskRetentionFormSchema,
  invalid(issues) {
    const fields: Record<string, string> = {};
    for (const issue of issues) {
      const field = String(issue.path[0] ?? "");
      fields[field] ??=
        field === "confirm"
          ? "Tick the box to confirm that finished tasks' data is deleted from every store."
          : "A whole number of days, at least 1.";
    }
    return { status: "error", message: "Nothing was deleted: check the fields below.", fields };
  },
  async run({ days }, { actor }) {
    const result = await applyTaskRetention(await consoleDb(), { olderThanDays: days }, actor);
    const held = result.heldTasks.length
      ? ` ${result.heldTasks.length} finished task(s) old enough were kept under a legal hold.`
      : "";
    // A run reads a bounded number of the old tasks (docs/cost-growth.md): say so when it stopped there.
    const read = result.walk.tasksRead.toLocaleString("en");
    const bounded = result.walk.stopped === "bound";
    const goesOn = bounded
      ? ` This run read ${read} task(s) past the cutoff, as many as one run reads, and stopped there: the next run goes on from where it stopped.`
      : "";
    if (result.entry === null)
      return {
        status: "done",
        message: bounded
          ? `Nothing deleted, nothing recorded: among the ${read} task(s) past the cutoff (${result.cutoff.toISOString()}) this run read, as many as one run reads, no finished task was quiet for ${days} days outside a legal hold. The next run goes on from where it stopped.${held}`
          : `No finished task was quiet for ${days} days (since ${result.cutoff.toISOString()}) outside a legal hold: nothing deleted, nothing recorded.${held}`,
      };
    const counts = Object.entries(result.rows)
      .filter(([, n]) => n > 0)
      .map(([table, n]) => `${table} ${n}`)
      .join(", ");
    return {
      status: "done",
      message: `Deleted the data of ${result.tasks.length} finished task(s) (${result.tasks.map((t) => t.id).join(", ")}) from every store in one transaction: ${counts}. Their audit streams now start at anchors; the run is audit entry ${result.entry.id}.${held}${goesOn}`,
    };
  },
});

/**
 * One class's term, as the API sets it (lib/use-cases/retention/retention-terms.ts):
 * under compare-and-swap on the version the page showed, so a term someone
 * changed since is not overwritten unseen.
 */
export const setRetentionTermAction: FormAction<RetentionFormState> = sessionFormAction({
  ...retentionForm,
  name: "setRetentionTermAction",
  schema: SetRetentionTermFormSchema,
  invalid: () => ({ status: "error", message: formIncompleteMessage, fields: {} }),
  async run({ data_class, keep_days, expected_version }, { actor }) {
    const dataClass = dataClassOrThrow(data_class);
    const term = await changeRetentionTerm(
      await consoleDb(),
      dataClass,
      { keep_days: keepDaysOfForm(keep_days), expected_version },
      actor,
    );
    return {
      status: "done",
      message: `The ${dataClass} term is now ${term.keepDays === null ? "forever: its finished tasks are kept" : `${term.keepDays} days after a finished task's last activity`} (version ${term.version}); the change is in the audit log.`,
    };
  },
  answer: (error) =>
    error.code === "version_conflict"
      ? { status: "conflict", message: `${error.message} Nothing was changed; the page now shows the current terms.` }
      : undefined,
});
