import type { GateName } from "@/lib/model/tasks/task-state";
import type { GateRule, WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";
import { agentTaskV1, agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1, deliveryV2 } from "@/lib/model/workflows/delivery";
import { validateWorkflowDefinition } from "@/lib/model/workflows/validate-definition";

/**
 * Every definition ever shipped stays here: tasks pin a digest, and a task
 * created under version 1 keeps running under version 1 after version 2 ships.
 */
export const workflowDefinitions: readonly WorkflowDefinition[] = [agentTaskV1, agentTaskV2, deliveryV1, deliveryV2];

// The shipped definitions pass the validator a published one must pass, so a
// broken edit to one fails at start-up naming every problem, not on some
// task's first transition. Four small documents: about a millisecond, once.
for (const { digest, edges: _expanded, ...data } of workflowDefinitions) {
  const checked = validateWorkflowDefinition(data);
  if (!checked.ok) {
    const problems = checked.problems.map((p) => `${p.path}: ${p.message}`).join("; ");
    throw new Error(`workflow ${data.name} v${data.version} (${digest}) is invalid: ${problems}`);
  }
}

export function getWorkflowByDigest(digest: string): WorkflowDefinition | undefined {
  return workflowDefinitions.find((d) => d.digest === digest);
}

/** The newest version of a workflow by name: what new tasks are created with. */
export function getLatestWorkflow(name: string): WorkflowDefinition | undefined {
  return workflowDefinitions.filter((d) => d.name === name).sort((a, b) => b.version - a.version)[0];
}

export const workflowNames = [...new Set(workflowDefinitions.map((d) => d.name))];

/**
 * Who sets each of a task's human gates: its own definition's rules, or,
 * for a version that predates them, the newest version's. A task pinned to
 * an old definition keeps its edges and guards, but not a hole through
 * which an agent approved what only a person may.
 */
export function gateRulesOf(def: WorkflowDefinition): Partial<Record<GateName, GateRule>> {
  return def.gates ?? getLatestWorkflow(def.name)?.gates ?? {};
}
