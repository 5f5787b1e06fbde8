import type { InvariantViolation } from "@/lib/core/errors";
import type { WorkflowDefinitionData } from "@/lib/model/workflows/workflow-definition";
import type { WorkflowMigrationPlan } from "@/lib/use-cases/workflows/plan-workflow-migration";
import type { WorkflowMigrationResult } from "@/lib/use-cases/workflows/apply-workflow-migration";
import type { MigrationPlanView, MigrationTaskResultView } from "@/lib/adapters/console/workflows/migration-form";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { orderedStateNames } from "@/lib/adapters/console/workflows/workflow-states";

/** A refusal as the page says it: the engine's words, then the rule's name for whoever looks it up. */
function refusalWords(r: InvariantViolation): string {
  return `${r.message} (${r.invariant})`;
}

/** A migration plan as the page shows it: per task, where it is, where it would go, and yes or why not. */
export function describeMigrationPlan(
  plan: WorkflowMigrationPlan,
  context: { fromVersion: number; fromDefinition: WorkflowDefinitionData; mapping: Record<string, string> },
): MigrationPlanView {
  const active = orderedStateNames(context.fromDefinition).filter(
    (name) => context.fromDefinition.states[name]?.terminal !== true,
  );
  return {
    name: plan.workflow,
    fromVersion: context.fromVersion,
    toVersion: plan.to.version,
    mapping: active.map((from) => ({ from, to: context.mapping[from] ?? null })),
    tasks: plan.tasks.map((t) => ({
      taskId: t.task_id,
      version: t.task_version ?? 0,
      from: t.current_state ?? "unknown",
      to: t.mapped_state,
      allowed: t.allowed,
      reasons: t.refusals.map(refusalWords),
    })),
  };
}

/** What a confirmation did, in one sentence and per task. */
export function describeMigrationResult(result: WorkflowMigrationResult): {
  message: string;
  results: MigrationTaskResultView[];
} {
  const total = result.migrated + result.refused;
  const message =
    result.refused === 0
      ? `Moved ${pluralize(result.migrated, "task")} to ${result.workflow} v${result.to.version}.`
      : `Moved ${result.migrated} of ${pluralize(total, "task")} to ${result.workflow} v${result.to.version}; ${result.refused} refused and left as they were.`;
  return {
    message,
    results: result.tasks.map((t) =>
      t.outcome === "migrated"
        ? {
            taskId: t.task_id,
            outcome: "moved",
            message: `now on v${result.to.version} in ${t.status}, at version ${t.version}.`,
          }
        : { taskId: t.task_id, outcome: "refused", message: t.refusals.map(refusalWords).join(" ") },
    ),
  };
}
