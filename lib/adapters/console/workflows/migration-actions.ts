import { z } from "zod";
import { formIncompleteMessage, type FormActionSpec } from "@/lib/adapters/actions/form-action";
import type { Db } from "@/lib/db/client";
import { getWorkflow } from "@/lib/use-cases/workflows/get-workflow";
import { planWorkflowMigration } from "@/lib/use-cases/workflows/plan-workflow-migration";
import { applyWorkflowMigration } from "@/lib/use-cases/workflows/apply-workflow-migration";
import {
  mappingFromForm,
  migrationReasonMaxLength,
  plannedTasksFromForm,
  type MigrationApplyFormState,
  type MigrationPlanFormState,
} from "@/lib/adapters/console/workflows/migration-form";
import { describeMigrationPlan, describeMigrationResult } from "@/lib/adapters/console/workflows/migration-format";

/**
 * The migration page's two steps, as form-action specs
 * (app/(console)/workflows/[name]/migrate/actions.ts binds them to the
 * session and the server's database; tests run them with runFormAction on a
 * test database). Both need
 * workflows:migrate (engineers, admins), checked on the server whatever the
 * page showed: even the plan, since it lists every running task of a
 * version with the state it is in.
 */
const pair = {
  name: z.string().min(1).max(64),
  fromVersion: z.coerce.number().int().min(1),
  toVersion: z.coerce.number().int().min(1),
};

// Loose: the mapping and the planned tasks are fields named by state and by task (map:<state>, task:<id>).
const PlanFormSchema = z.looseObject(pair);

const ApplyFormSchema = z.looseObject({
  ...pair,
  reason: z
    .string()
    .trim()
    .min(1, "Give a reason: it is recorded on each task's transition and in the audit log.")
    .max(migrationReasonMaxLength, `Keep the reason under ${migrationReasonMaxLength} characters.`),
});

export function planMigrationSpec(database: () => Db): FormActionSpec<typeof PlanFormSchema, MigrationPlanFormState> {
  return {
    name: "planMigrationAction",
    permission: "workflows:migrate",
    schema: PlanFormSchema,
    readOnly: true,
    nothingWas: "planned",
    errorState: (message) => ({ status: "error", message }),
    invalid: () => ({ status: "error", message: formIncompleteMessage }),
    async run(input) {
      const db = database();
      const from = await getWorkflow(db, input.name, input.fromVersion);
      const mapping = mappingFromForm(input);
      const plan = await planWorkflowMigration(db, {
        workflow: input.name,
        to_version: input.toVersion,
        from_digest: from.digest,
        state_mapping: mapping,
      });
      return {
        status: "done",
        plan: describeMigrationPlan(plan, { fromVersion: input.fromVersion, fromDefinition: from.definition, mapping }),
        plannedAt: plan.planned_at,
      };
    },
  };
}

/**
 * Applies a plan: each task the plan could move, at the version the plan saw
 * it at, so one that moved since is refused as stale, in words, and keeps
 * its state. The answer is per task; one task's refusal leaves the others.
 */
export function applyMigrationSpec(
  database: () => Db,
): FormActionSpec<typeof ApplyFormSchema, MigrationApplyFormState> {
  return {
    name: "applyMigrationAction",
    permission: "workflows:migrate",
    schema: ApplyFormSchema,
    errorState: (message) => ({ status: "error", message }),
    async run(input, { actor }) {
      const tasks = plannedTasksFromForm(input);
      if (tasks.length === 0)
        return { status: "error", message: "The plan moves no task; nothing was changed. Plan again." };
      const result = await applyWorkflowMigration(
        database(),
        {
          workflow: input.name,
          to_version: input.toVersion,
          state_mapping: mappingFromForm(input),
          tasks: tasks.map((t) => ({ task_id: t.taskId, expected_version: t.version })),
          reason: input.reason,
        },
        actor,
      );
      return { status: "done", ...describeMigrationResult(result) };
    },
  };
}
