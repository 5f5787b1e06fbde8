import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { agentTaskV1, agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1 } from "@/lib/model/workflows/delivery";

/**
 * Every definition ever shipped stays here: tasks pin a digest, and a task
 * created under version 1 keeps running under version 1 after version 2 ships.
 */
export const workflowDefinitions: readonly WorkflowDefinition[] = [agentTaskV1, agentTaskV2, deliveryV1];

export function getWorkflowByDigest(digest: string): WorkflowDefinition | undefined {
  return workflowDefinitions.find((d) => d.digest === digest);
}

/** The newest version of a workflow by name: what new tasks are created with. */
export function getLatestWorkflow(name: string): WorkflowDefinition | undefined {
  return workflowDefinitions.filter((d) => d.name === name).sort((a, b) => b.version - a.version)[0];
}

export const workflowNames = [...new Set(workflowDefinitions.map((d) => d.name))];
