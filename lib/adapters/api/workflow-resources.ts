import { z } from "zod";
import { AppError } from "@/lib/core/errors";
import { InvariantViolationSchema } from "@/lib/adapters/api/shared-resources";
import { recordPermissionDenied } from "@/lib/adapters/auth/audit-trail";
import type { Db } from "@/lib/db/client";
import { requireRegistryAuthority, type Principal } from "@/lib/model/permissions";
import { WorkflowDefinitionDocumentSchema } from "@/lib/model/workflows/validate-definition";
import type { WorkflowVersionView, WorkflowVersionWithTasks } from "@/lib/stores/workflow-registry";
import type { WorkflowMigrationPlan } from "@/lib/use-cases/workflows/plan-workflow-migration";
import type { WorkflowMigrationResult } from "@/lib/use-cases/workflows/apply-workflow-migration";

/**
 * The wire shape of a registry entry: `definition` exactly as POST
 * /api/v1/workflows accepts it, so fetch → edit → publish round-trips, and
 * the registry's own facts beside it, never inside it (they are not part of
 * what is published, nor of the digest).
 */
export const WorkflowVersionResourceSchema = z.object({
  definition: WorkflowDefinitionDocumentSchema.meta({
    description: "The definition as published: POST it back (with a higher version) to publish an edit.",
  }),
  name: z.string(),
  version: z.int(),
  digest: z
    .string()
    .meta({ description: "sha256 of the canonical definition; pinned on every task as workflow_digest." }),
  built_in: z.boolean().meta({ description: "Shipped with Verity and registered at start, rather than published." }),
  published_by: z.string().meta({ description: "Who published it (a SPIFFE ID, or system:start for a shipped one)." }),
  published_at: z.iso.datetime(),
});
export type WorkflowVersionResource = z.infer<typeof WorkflowVersionResourceSchema>;

export const WorkflowListSchema = z.object({
  items: z.array(
    WorkflowVersionResourceSchema.extend({
      tasks: z.int().meta({ description: "Tasks pinned to this version, in any status." }),
    }),
  ),
});

export function workflowVersionResource(v: WorkflowVersionView): WorkflowVersionResource {
  return {
    definition: v.definition,
    name: v.name,
    version: v.version,
    digest: v.digest,
    built_in: v.builtIn,
    published_by: v.publishedBy,
    published_at: v.publishedAt.toISOString(),
  };
}

export function workflowListResource(versions: WorkflowVersionWithTasks[]): z.infer<typeof WorkflowListSchema> {
  return { items: versions.map((v) => ({ ...workflowVersionResource(v), tasks: v.tasks })) };
}

const MigrationTaskPlanSchema = z.object({
  task_id: z.string(),
  task_version: z
    .int()
    .nullable()
    .meta({ description: "The version the plan saw: apply with it as expected_version." }),
  from: z.object({ version: z.int(), digest: z.string() }).nullable(),
  current_state: z.string().nullable(),
  mapped_state: z.string().nullable(),
  allowed: z.boolean(),
  refusals: z.array(InvariantViolationSchema),
});

export const WorkflowMigrationPlanSchema = z.object({
  workflow: z.string(),
  to: z.object({ version: z.int(), digest: z.string() }),
  state_mapping: z.record(z.string(), z.string()),
  tasks: z.array(MigrationTaskPlanSchema),
  movable: z.int(),
  refused: z.int(),
  planned_at: z.iso.datetime(),
});

export const WorkflowMigrationResultSchema = z.object({
  workflow: z.string(),
  to: z.object({ version: z.int(), digest: z.string() }),
  migrated: z.int(),
  refused: z.int(),
  tasks: z.array(
    z.union([
      z.object({
        task_id: z.string(),
        outcome: z.literal("migrated"),
        version: z.int(),
        status: z.string(),
        from: z.object({ version: z.int(), digest: z.string() }).nullable(),
      }),
      z.object({ task_id: z.string(), outcome: z.literal("refused"), refusals: z.array(InvariantViolationSchema) }),
    ]),
  ),
});

export function migrationPlanResource(plan: WorkflowMigrationPlan): z.infer<typeof WorkflowMigrationPlanSchema> {
  return plan;
}

export function migrationResultResource(
  result: WorkflowMigrationResult,
): z.infer<typeof WorkflowMigrationResultSchema> {
  return result;
}

/**
 * requireRegistryAuthority with the refusal in the audit log, like every
 * other denied permission on the API.
 */
export async function requireWorkflowPublisherRecorded(
  db: Db,
  principal: Principal,
  where: string,
): Promise<Principal> {
  try {
    return requireRegistryAuthority(principal, "workflows");
  } catch (error) {
    if (error instanceof AppError && error.code === "forbidden")
      await recordPermissionDenied(db, principal, "workflows:publish", where);
    throw error;
  }
}
