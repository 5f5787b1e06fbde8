import { AppError, fieldErrorsFromZod } from "@/lib/core/errors";
import type { Task } from "@/lib/generated/prisma/client";
import { TaskStateSchema, type TaskState } from "@/lib/model/tasks/task-state";
import { checkStateInvariants } from "@/lib/model/tasks/transition-rules";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { getWorkflowByDigest } from "@/lib/model/workflows";

/**
 * The checks every task write passes before its statement runs: the task's
 * workflow is one this server has, and the document about to be stored is a
 * valid state of it. A create, a transition and a restore all end here.
 */

export function workflowOfOrThrow(row: Task): WorkflowDefinition {
  const def = getWorkflowByDigest(row.workflowDigest);
  if (!def) {
    throw new AppError(
      "invariant_violated",
      `Task ${row.id} is pinned to workflow digest ${row.workflowDigest}, which this server does not have.`,
      {
        violations: [
          { invariant: "workflow_definition_available", message: `Unknown workflow digest ${row.workflowDigest}.` },
        ],
      },
    );
  }
  return def;
}

export function assertValidState(def: WorkflowDefinition, state: TaskState): void {
  const shape = TaskStateSchema.safeParse(state);
  if (!shape.success) {
    throw new AppError("validation_failed", "The resulting state does not match TaskState v2.", {
      errors: fieldErrorsFromZod(shape.error.issues as Parameters<typeof fieldErrorsFromZod>[0]),
    });
  }
  const violations = checkStateInvariants(def, state);
  if (violations.length > 0)
    throw new AppError("invariant_violated", violations.map((v) => v.message).join(" "), { violations });
}
