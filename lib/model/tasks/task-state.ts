import { z } from "zod";
import { clientIdSchema } from "@/lib/core/validation";

/**
 * TaskState v2 of the durable-state spec, plus subtasks. The schema is fixed:
 * every object is strict, so an agent cannot invent keys; unknown keys are
 * rejected, never stored.
 */
export const TASK_STATE_SCHEMA_VERSION = "oaies.task-state.v2";

export const gateNames = [
  "plan_approved",
  "implementation_complete",
  "review_passed",
  "tests_passing",
  "security_approved",
  "deployment_approved",
] as const;
export const GateNameSchema = z.enum(gateNames);
export type GateName = z.infer<typeof GateNameSchema>;

export const subtaskStatuses = ["PENDING", "ACTIVE", "COMPLETED", "FAILED", "CANCELLED"] as const;
export const SubtaskStatusSchema = z.enum(subtaskStatuses);

const identifier = clientIdSchema;
/** A SPIFFE ID or another stable principal name. */
export const IdentitySchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\s]+$/, "must not contain spaces");

export const GatesSchema = z.strictObject({
  plan_approved: z.boolean(),
  implementation_complete: z.boolean(),
  review_passed: z.boolean(),
  tests_passing: z.boolean(),
  security_approved: z.boolean(),
  deployment_approved: z.boolean(),
});
export type Gates = z.infer<typeof GatesSchema>;

export const ArtifactsSchema = z.strictObject({
  implementation_plan: z.string().max(4096).optional(),
  code_files: z.array(z.string().max(1024)).max(1000).optional(),
  test_results: z.string().max(4096).optional(),
  review_report: z.string().max(4096).optional(),
});

const money = z.number().finite().min(0).max(1e12);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const BudgetSchema = z.strictObject({
  currency_committed_usd: money,
  currency_spent_usd: money,
  tokens_spent: count,
  hops_used: count,
});

export const SubtaskSchema = z.strictObject({
  id: identifier,
  title: z.string().min(1).max(200),
  mandatory: z.boolean(),
  status: SubtaskStatusSchema,
});
export type Subtask = z.infer<typeof SubtaskSchema>;

const agentList = z.array(IdentitySchema).max(100);

export const TaskStateSchema = z.strictObject({
  schema_version: z.literal(TASK_STATE_SCHEMA_VERSION),
  task_id: z.string(),
  version: z.number().int().min(1),
  status: z.string(),
  gates: GatesSchema,
  artifacts: ArtifactsSchema,
  active_agents: agentList,
  completed_agents: agentList,
  failed_agents: agentList,
  budget: BudgetSchema,
  subtasks: z.array(SubtaskSchema).max(200),
  workflow_digest: z.string(),
  intent_id: z.string(),
  updated_at: z.string(),
  updated_by: z.string(),
});
export type TaskState = z.infer<typeof TaskStateSchema>;

/**
 * What a transition may change besides the status. Objects merge member by
 * member, agent lists are replaced, subtasks merge by id (a subtask can be
 * added or updated, never removed, so a mandatory one cannot vanish).
 */
export const TaskPatchSchema = z.strictObject({
  gates: GatesSchema.partial().optional(),
  artifacts: ArtifactsSchema.partial().optional(),
  active_agents: agentList.optional(),
  completed_agents: agentList.optional(),
  failed_agents: agentList.optional(),
  budget: BudgetSchema.partial().optional(),
  subtasks: z
    .array(
      z.strictObject({
        id: identifier,
        title: z.string().min(1).max(200).optional(),
        mandatory: z.boolean().optional(),
        status: SubtaskStatusSchema.optional(),
      }),
    )
    .max(200)
    .optional(),
});
export type TaskPatch = z.infer<typeof TaskPatchSchema>;

export const NewSubtaskSchema = SubtaskSchema.extend({ status: SubtaskStatusSchema.default("PENDING") });

export const emptyGates: Gates = {
  plan_approved: false,
  implementation_complete: false,
  review_passed: false,
  tests_passing: false,
  security_approved: false,
  deployment_approved: false,
};

export function applyPatch(state: TaskState, patch: TaskPatch): TaskState {
  const subtasks = state.subtasks.map((s) => ({ ...s }));
  for (const change of patch.subtasks ?? []) {
    const existing = subtasks.find((s) => s.id === change.id);
    if (existing) {
      Object.assign(existing, definedMembers(change));
    } else {
      subtasks.push({
        id: change.id,
        title: change.title ?? change.id,
        mandatory: change.mandatory ?? false,
        status: change.status ?? "PENDING",
      });
    }
  }
  return {
    ...state,
    gates: { ...state.gates, ...definedMembers(patch.gates ?? {}) },
    artifacts: { ...state.artifacts, ...definedMembers(patch.artifacts ?? {}) },
    active_agents: patch.active_agents ?? state.active_agents,
    completed_agents: patch.completed_agents ?? state.completed_agents,
    failed_agents: patch.failed_agents ?? state.failed_agents,
    budget: { ...state.budget, ...definedMembers(patch.budget ?? {}) },
    subtasks,
  };
}

function definedMembers<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function isEmptyPatch(patch: TaskPatch): boolean {
  return Object.values(patch).every((v) => v === undefined);
}
