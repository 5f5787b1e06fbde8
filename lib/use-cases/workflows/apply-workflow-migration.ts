import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { type AppError, isAppError } from "@/lib/core/errors";
import { digestOf } from "@/lib/core/canonical-json";
import { newId } from "@/lib/core/ids";
import { clientIdSchema, parseOrThrow } from "@/lib/core/validation";
import type { Actor } from "@/lib/model/actor";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { migrateTaskInTransaction } from "@/lib/stores/tasks/task-migration";
import {
  planTaskMigration,
  staleRefusal,
  StateMappingSchema,
  type MigrationTaskPlan,
} from "@/lib/use-cases/workflows/migration-rules";
import { MAX_TASKS_PER_MIGRATION, targetDefinitionOrThrow } from "@/lib/use-cases/workflows/plan-workflow-migration";

export const WorkflowMigrationApplyInputSchema = z.strictObject({
  workflow: z.string().min(1).max(64),
  to_version: z.int().min(1),
  state_mapping: StateMappingSchema,
  /** The plan's tasks to move, each at the version the plan saw it at. */
  tasks: z
    .array(z.strictObject({ task_id: clientIdSchema, expected_version: z.int().min(1) }))
    .min(1)
    .max(MAX_TASKS_PER_MIGRATION),
  reason: z.string().trim().min(1, "say why these tasks move").max(500),
});

export type MigrationTaskResult =
  | { task_id: string; outcome: "migrated"; version: number; status: string; from: MigrationTaskPlan["from"] }
  | { task_id: string; outcome: "refused"; refusals: MigrationTaskPlan["refusals"] };

export interface WorkflowMigrationResult {
  workflow: string;
  to: { version: number; digest: string };
  migrated: number;
  refused: number;
  tasks: MigrationTaskResult[];
}

/**
 * Applies a plan: each task in its own transaction, its row locked, the plan
 * made again on what is there now. A task that moved since the plan is
 * refused as stale (the engineer saw another state than the one that would
 * be migrated); one the new version's invariants now refuse is refused with
 * them; the rest move through the task store's migration CAS, each with its
 * transition row and audit entry. One task's refusal leaves the others alone.
 */
export async function applyWorkflowMigration(
  db: Db,
  rawInput: unknown,
  actor: Actor,
): Promise<WorkflowMigrationResult> {
  const input = parseOrThrow(WorkflowMigrationApplyInputSchema, rawInput);
  const to = await targetDefinitionOrThrow(db, input.workflow, input.to_version);
  const results: MigrationTaskResult[] = [];
  for (const { task_id: taskId, expected_version: expectedVersion } of input.tasks) {
    try {
      const result = await db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1 FROM tasks WHERE id = ${taskId} FOR UPDATE`;
        const plan = planTaskMigration(taskId, await getTask(tx, taskId), to, input.state_mapping);
        const current = plan.task_version !== expectedVersion ? staleRefusal(plan, expectedVersion) : plan;
        if (!current.allowed || current.mapped_state === null)
          return { task_id: taskId, outcome: "refused" as const, refusals: current.refusals };
        const from = current.from;
        const moved = await migrateTaskInTransaction(
          tx,
          {
            taskId,
            expectedVersion,
            to,
            status: current.mapped_state,
            mapping: input.state_mapping,
            reason: `Migrated from ${to.name} v${from?.version ?? "?"} to v${to.version} (${current.current_state} → ${current.mapped_state}): ${input.reason}`,
            transitionId: newId("tr"),
            requestDigest: digestOf({
              op: "migrate",
              task_id: taskId,
              expected_version: expectedVersion,
              to_digest: to.digest,
              state_mapping: input.state_mapping,
            }),
          },
          actor,
        );
        return {
          task_id: taskId,
          outcome: "migrated" as const,
          version: moved.task.version,
          status: moved.task.status,
          from,
        };
      });
      results.push(result);
    } catch (error) {
      // A refusal the store found under the lock (a conflict, an invariant) is this task's answer, not the batch's.
      if (!isAppError(error) || error.code === "not_found") throw error;
      results.push({ task_id: taskId, outcome: "refused", refusals: refusalsOf(error) });
    }
  }
  const migrated = results.filter((r) => r.outcome === "migrated").length;
  return {
    workflow: to.name,
    to: { version: to.version, digest: to.digest },
    migrated,
    refused: results.length - migrated,
    tasks: results,
  };
}

function refusalsOf(error: AppError): MigrationTaskPlan["refusals"] {
  const violations = error.details.violations;
  return violations && violations.length > 0 ? violations : [{ invariant: error.code, message: error.message }];
}
