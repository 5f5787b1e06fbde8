import { z } from "zod";
import type { ActorKind } from "@/lib/model/workflows/workflow-definition";
import { ArtifactsSchema, GateNameSchema } from "@/lib/model/tasks/task-state";

/**
 * What the API sends: each lib/adapters/api/<resource>-resources.ts holds the
 * wire shape of its resources as zod schemas, and the functions that build
 * them from the engine's view; this module holds the parts several resources
 * share, and the problem body every error answers with. The serializers are
 * typed by the schemas, so the OpenAPI document (lib/adapters/openapi/, generated
 * from these schemas) cannot drift from what the routes return. Names are
 * snake_case like TaskState itself; times are ISO 8601 strings.
 */
export const ActorKindSchema = z.enum(["agent", "user", "system"]) satisfies z.ZodType<ActorKind>;

export const FieldErrorSchema = z.object({
  field: z
    .string()
    .meta({ description: 'JSON path of the offending member, "" for the whole body, or a header name.' }),
  message: z.string(),
});
export const InvariantViolationSchema = z.object({
  invariant: z.string().meta({ description: "Stable name of the invariant, e.g. terminal_state_is_final." }),
  message: z.string(),
});

export const GuardSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("gates_true"), gates: z.array(GateNameSchema) }),
  z.object({ kind: z.literal("mandatory_subtasks_completed") }),
  z.object({
    kind: z.literal("artifact_present"),
    artifact: ArtifactsSchema.keyof(),
  }),
  z.object({ kind: z.literal("budget_within_commitment") }),
]);

export const ProblemSchema = z.looseObject({
  type: z.url(),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  instance: z.string().optional(),
  errors: z.array(FieldErrorSchema).optional().meta({ description: "400: each offending field." }),
  violations: z
    .array(InvariantViolationSchema)
    .optional()
    .meta({ description: "422 (and 403 for an edge the actor may not take): each broken invariant." }),
  current_version: z
    .int()
    .optional()
    .meta({ description: "409 version-conflict: the version to read and retry from." }),
  current_status: z.string().optional(),
  execution_id: z.string().optional().meta({
    description: "422 unknown_outcome_reconciled_before_retry: the execution whose outcome is not known yet.",
  }),
  holder: z.string().optional().meta({ description: "409 lease-conflict on acquire: who holds the lease." }),
  expires_at: z.string().optional().meta({ description: "409 lease-conflict on acquire: until when." }),
  permission: z.string().optional(),
  max_bytes: z.int().optional(),
  request_id: z
    .string()
    .optional()
    .meta({ description: "500: quote it when reporting; the cause is in the server log." }),
});
