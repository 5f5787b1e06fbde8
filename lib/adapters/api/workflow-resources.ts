import { z } from "zod";
import { ActorKindSchema, GuardSchema } from "@/lib/adapters/api/shared-resources";
import { GateNameSchema } from "@/lib/model/tasks/task-state";
import type { WorkflowDefinition } from "@/lib/model/workflows/workflow-definition";

/** The wire shape of a workflow definition, every state, edge and rejection spelled out. */
export const WorkflowResourceSchema = z.object({
  name: z.string(),
  version: z.int(),
  title: z.string(),
  description: z.string(),
  digest: z
    .string()
    .meta({ description: "sha256 of the canonical definition; pinned on every task as workflow_digest." }),
  initial: z.string(),
  states: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      terminal: z.boolean(),
      success: z.boolean(),
      requires_gates: z.array(GateNameSchema),
    }),
  ),
  edges: z.array(
    z.object({
      from: z.string(),
      to: z.string(),
      by: z.array(ActorKindSchema),
      description: z.string(),
      guards: z.array(GuardSchema),
    }),
  ),
  rejections: z.array(z.object({ from: z.string(), to: z.string(), invariant: z.string(), message: z.string() })),
});
export type WorkflowResource = z.infer<typeof WorkflowResourceSchema>;

export const WorkflowListSchema = z.object({ items: z.array(WorkflowResourceSchema) });

export function workflowResource(def: WorkflowDefinition): WorkflowResource {
  return {
    name: def.name,
    version: def.version,
    title: def.title,
    description: def.description,
    digest: def.digest,
    initial: def.initial,
    states: Object.entries(def.states).map(([name, s]) => ({
      name,
      description: s.description,
      terminal: s.terminal === true,
      success: s.success === true,
      requires_gates: s.requiresGates ?? [],
    })),
    edges: def.edges.map((e) => ({
      from: e.from,
      to: e.to,
      by: e.by,
      description: e.description,
      guards: e.guards ?? [],
    })),
    rejections: def.rejections.map((r) => ({ from: r.from, to: r.to, invariant: r.invariant, message: r.message })),
  };
}
