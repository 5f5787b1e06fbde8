import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { clientIdSchema, parseOrThrow } from "@/lib/core/validation";
import { getWorkflowByDigest, isWorkflowKnown } from "@/lib/model/workflows";
import { isTerminal, type WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getTask } from "@/lib/use-cases/tasks/task-queries";
import { findWorkflowVersion, loadWorkflowDefinitions } from "@/lib/stores/workflow-registry";
import {
  planTaskMigration,
  StateMappingSchema,
  type MigrationTaskPlan,
} from "@/lib/use-cases/workflows/migration-rules";

const DigestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 hex digits>");

/** At most this many tasks per plan: a plan is read by a person before it is applied. */
export const MAX_TASKS_PER_MIGRATION = 500;

export const WorkflowMigrationPlanInputSchema = z
  .strictObject({
    workflow: z.string().min(1).max(64),
    to_version: z.int().min(1),
    /** These tasks; or every running task pinned to `from_digest`. */
    task_ids: z.array(clientIdSchema).min(1).max(MAX_TASKS_PER_MIGRATION).optional(),
    from_digest: DigestSchema.optional(),
    state_mapping: StateMappingSchema,
  })
  .refine((input) => (input.task_ids === undefined) !== (input.from_digest === undefined), {
    message: "name the tasks (task_ids) or the version they are on (from_digest), one of the two",
    path: ["task_ids"],
  });

export interface WorkflowMigrationPlan {
  workflow: string;
  to: { version: number; digest: string };
  state_mapping: Record<string, string>;
  tasks: MigrationTaskPlan[];
  /** Tasks the plan would move / refuses. */
  movable: number;
  refused: number;
  planned_at: string;
}

/**
 * A dry run: for each task, where the mapping would put it under the newer
 * version and whether its state as it stands satisfies that version's
 * invariants there, or every reason it would be refused. Nothing is written.
 */
export async function planWorkflowMigration(db: Db, rawInput: unknown): Promise<WorkflowMigrationPlan> {
  const input = parseOrThrow(WorkflowMigrationPlanInputSchema, rawInput);
  const to = await targetDefinitionOrThrow(db, input.workflow, input.to_version);
  const taskIds = input.task_ids ?? (await runningTaskIdsOn(db, input.workflow, input.from_digest ?? ""));
  const tasks: MigrationTaskPlan[] = [];
  for (const taskId of [...new Set(taskIds)])
    tasks.push(planTaskMigration(taskId, await getTask(db, taskId), to, input.state_mapping));
  const movable = tasks.filter((t) => t.allowed).length;
  return {
    workflow: to.name,
    to: { version: to.version, digest: to.digest },
    state_mapping: input.state_mapping,
    tasks,
    movable,
    refused: tasks.length - movable,
    planned_at: new Date().toISOString(),
  };
}

export async function targetDefinitionOrThrow(db: Db, name: string, version: number): Promise<WorkflowDefinition> {
  const target = await findWorkflowVersion(db, name, version);
  const def = target ? getWorkflowByDigest(target.digest) : undefined;
  if (!def)
    throw new AppError("validation_failed", `to_version: ${name} has no version ${version}`, {
      errors: [{ field: "to_version", message: `${name} has no version ${version}` }],
    });
  return def;
}

/** The tasks pinned to a digest that have not ended, oldest first, at most the plan's limit. */
async function runningTaskIdsOn(db: Db, workflow: string, digest: string): Promise<string[]> {
  await loadWorkflowDefinitions(db, [digest]);
  const from = isWorkflowKnown(digest) ? getWorkflowByDigest(digest) : undefined;
  if (!from || from.name !== workflow)
    throw new AppError("validation_failed", `from_digest: not a version of ${workflow} in the registry`, {
      errors: [{ field: "from_digest", message: `not a version of ${workflow} in the registry` }],
    });
  const ended = Object.keys(from.states).filter((s) => isTerminal(from, s));
  const rows = await db.task.findMany({
    where: { workflowDigest: digest, status: { notIn: ended } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: MAX_TASKS_PER_MIGRATION,
    select: { id: true },
  });
  return rows.map((r) => r.id);
}
