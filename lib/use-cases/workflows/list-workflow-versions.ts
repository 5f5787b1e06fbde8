import type { Db } from "@/lib/db/client";
import { listWorkflowVersionRows, type WorkflowVersionWithTasks } from "@/lib/stores/workflow-registry";

/** Every version in the registry (or of one name), newest first within a name, with who published it, when, and its tasks. */
export async function listWorkflowVersions(
  db: Db,
  filter: { name?: string } = {},
): Promise<WorkflowVersionWithTasks[]> {
  return listWorkflowVersionRows(db, filter);
}
