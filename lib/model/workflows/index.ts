import type { GateName } from "@/lib/model/tasks/task-state";
import {
  defineWorkflow,
  type GateRule,
  type WorkflowDefinition,
  type WorkflowDefinitionData,
} from "@/lib/model/workflows/workflow-definition";
import { agentTaskV1, agentTaskV2 } from "@/lib/model/workflows/agent-task";
import { deliveryV1, deliveryV2 } from "@/lib/model/workflows/delivery";
import { validateWorkflowDefinition } from "@/lib/model/workflows/validate-definition";

/**
 * The definitions shipped with Verity. Every one ever shipped stays here:
 * tasks pin a digest, and a task created under version 1 keeps running
 * under version 1 after version 2 ships. At start they are registered in
 * the workflow registry (lib/stores/workflow-registry.ts) under these same
 * digests, next to the versions people publish.
 */
export const workflowDefinitions: readonly WorkflowDefinition[] = [agentTaskV1, agentTaskV2, deliveryV1, deliveryV2];

// The shipped definitions pass the validator a published one must pass, so a
// broken edit to one fails at start-up naming every problem, not on some
// task's first transition. Four small documents: about a millisecond, once.
for (const def of workflowDefinitions) {
  const checked = validateWorkflowDefinition(documentOf(def));
  if (!checked.ok) {
    const problems = checked.problems.map((p) => `${p.path}: ${p.message}`).join("; ");
    throw new Error(`workflow ${def.name} v${def.version} (${def.digest}) is invalid: ${problems}`);
  }
}

/**
 * Every definition this process knows, by digest: the shipped ones, and each
 * published one the registry has read or written. A published version never
 * changes (its digest is the sha256 of its content), so an entry can never
 * be stale and is never evicted; what is missing is loaded by the registry
 * wherever a task row is read (the task store) and by the background loop.
 */
const known = new Map<string, WorkflowDefinition>(workflowDefinitions.map((d) => [d.digest, d]));

export function getWorkflowByDigest(digest: string): WorkflowDefinition | undefined {
  return known.get(digest);
}

export function isWorkflowKnown(digest: string): boolean {
  return known.has(digest);
}

/**
 * Adds a definition read from the registry. Its digest is recomputed and must
 * be the one it was stored under: a row edited behind the registry's back
 * would otherwise run tasks under rules nobody published.
 */
export function rememberWorkflowDefinition(data: WorkflowDefinitionData, digest: string): WorkflowDefinition {
  const cached = known.get(digest);
  if (cached) return cached;
  const def = defineWorkflow(data);
  if (def.digest !== digest)
    throw new Error(
      `workflow ${data.name} v${data.version}: stored under ${digest} but its content digests to ${def.digest}`,
    );
  known.set(digest, def);
  return def;
}

/**
 * Every definition this process knows, shipped and published. For what is
 * shown (filters, status order, defence-in-depth scans), not for decisions:
 * the registry's own list is in the database (lib/stores/workflow-registry.ts).
 */
export function knownWorkflowDefinitions(): WorkflowDefinition[] {
  return [...known.values()];
}

/** The newest version of a name this process knows: the order of its states on screen. New tasks read the registry's newest instead. */
export function getLatestKnownWorkflow(name: string): WorkflowDefinition | undefined {
  return knownWorkflowDefinitions()
    .filter((d) => d.name === name)
    .sort((a, b) => b.version - a.version)[0];
}

/** The document a definition is published as: its data, without what defineWorkflow derives. */
export function documentOf(def: WorkflowDefinition): WorkflowDefinitionData {
  const { digest: _digest, edges: _edges, ...data } = def;
  return data;
}

/**
 * Who sets each of a task's human gates: its own definition's rules, or, for
 * a shipped version that predates them, the newest shipped version's. A task
 * pinned to an old definition keeps its edges and guards, but not a hole
 * through which an agent approved what only a person may. A published
 * version says its own rules: one without `gates` has no human gate, and
 * nothing published later changes that.
 */
export function gateRulesOf(def: WorkflowDefinition): Partial<Record<GateName, GateRule>> {
  if (def.gates) return def.gates;
  if (!workflowDefinitions.some((d) => d.digest === def.digest)) return {};
  const newestShipped = workflowDefinitions.filter((d) => d.name === def.name).sort((a, b) => b.version - a.version)[0];
  return newestShipped?.gates ?? {};
}
