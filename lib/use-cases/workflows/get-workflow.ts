import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { findWorkflowVersion, type WorkflowVersionView } from "@/lib/stores/workflow-registry";

/** One version of a workflow from the registry: the newest, or `version`. */
export async function getWorkflow(db: Db, name: string, version?: number): Promise<WorkflowVersionView> {
  const found = await findWorkflowVersion(db, name, version);
  if (!found)
    throw new AppError(
      "not_found",
      version === undefined ? `Workflow ${name} does not exist.` : `Workflow ${name} has no version ${version}.`,
    );
  return found;
}
