/** The checkpoints part of the OpenAPI document: take, list, read, plan a restore, restore. */
import {
  etagHeader,
  ifMatchParam,
  jsonContent,
  type JsonSchema,
  optionalInBody,
  problems,
  ref,
  type SchemaEntries,
  taskId,
  tokenDescription,
  versionDescription,
} from "@/lib/adapters/openapi/shared-components";
import { CreateCheckpointInputSchema } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { RestorePlanInputSchema } from "@/lib/use-cases/checkpoints/plan-restore";
import { RestoreInputSchema } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import {
  CheckpointDetailSchema,
  CheckpointListSchema,
  CheckpointRestoreListSchema,
  CheckpointSummarySchema,
  RestorePlanSchema,
  RestoreResultSchema,
} from "@/lib/adapters/api/checkpoint-resources";

const checkpointId = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "Checkpoint id.",
};
const checkpointReaders = "Bearer token, or the console session (people): every role may read checkpoints.";

export const checkpointRequestSchemas: SchemaEntries = [
  ["CreateCheckpointRequest", CreateCheckpointInputSchema],
  ["RestorePlanRequest", RestorePlanInputSchema],
  ["RestoreRequest", RestoreInputSchema],
];

export const checkpointResponseSchemas: SchemaEntries = [
  ["Checkpoint", CheckpointSummarySchema],
  ["CheckpointList", CheckpointListSchema],
  ["CheckpointDetail", CheckpointDetailSchema],
  ["RestorePlan", RestorePlanSchema],
  ["RestoreResult", RestoreResultSchema],
  ["CheckpointRestoreList", CheckpointRestoreListSchema],
];

export function checkpointFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  optionalInBody(requestSchemas.RestoreRequest, "expected_version", versionDescription);
  optionalInBody(requestSchemas.RestoreRequest, "fencing_token", tokenDescription);
}

export function checkpointPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tasks/{id}/checkpoints": {
      get: {
        tags: ["checkpoints"],
        operationId: "listCheckpoints",
        summary: "The task's checkpoints, oldest first, each verified",
        description: checkpointReaders,
        parameters: [taskId],
        responses: {
          200: {
            description: "Checkpoints with their integrity reports.",
            content: jsonContent(ref("CheckpointList")),
          },
          ...problems(401, 403, 404),
        },
      },
      post: {
        tags: ["checkpoints"],
        operationId: "createCheckpoint",
        summary: "Checkpoint the task's current committed state",
        description:
          "Agents, engineers and admins. If-Match (or expected_version) pins the version you mean: a task that moved on is a 409. " +
          "A retried checkpoint_id returns the first checkpoint (200, Idempotent-Replayed). A state that is not valid TaskState is refused (422 checkpoint_of_valid_state), and so is a task with more tool receipts than a checkpoint lists (10,000; 422 checkpoint_receipts_within_bound).",
        parameters: [taskId, ifMatchParam],
        requestBody: { required: false, content: jsonContent(ref("CreateCheckpointRequest")) },
        responses: {
          201: {
            description: "Taken.",
            headers: { Location: { schema: { type: "string" } } },
            content: jsonContent(ref("Checkpoint")),
          },
          200: {
            description: "Taken before under this checkpoint_id.",
            headers: { "Idempotent-Replayed": { schema: { type: "string", const: "true" } } },
            content: jsonContent(ref("Checkpoint")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
    "/api/v1/tasks/{id}/checkpoints/restores": {
      get: {
        tags: ["checkpoints"],
        operationId: "listRestores",
        summary: "Every restore attempt on the task, applied or refused, newest first",
        parameters: [taskId],
        responses: {
          200: { description: "Restore records with their plans.", content: jsonContent(ref("CheckpointRestoreList")) },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/checkpoints/{id}": {
      get: {
        tags: ["checkpoints"],
        operationId: "getCheckpoint",
        summary: "One checkpoint: document, integrity report, diff to the task now",
        description: `${checkpointReaders} Each check (payload, canonical form, schema, snapshot digest, signature, columns, snapshot validity, workflow compatibility) is reported with a message.`,
        parameters: [checkpointId],
        responses: {
          200: { description: "The checkpoint.", content: jsonContent(ref("CheckpointDetail")) },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/checkpoints/{id}/restore-plan": {
      post: {
        tags: ["checkpoints"],
        operationId: "planRestore",
        summary: "Dry run of a restore: writes nothing",
        description:
          "Whether the restore would be allowed (else the refusal code and reason: corrupt, incompatible, terminal, current, stale, diverged, unreconciled, awaiting_human, invalid_state), " +
          "the fallback checkpoint when this one is corrupt, effects since (skipped by receipt, needing reconciliation or a person, retried with the same key), " +
          "what is re-authorized (budget, workflow, policy), the lease it would fence, and the resulting state with its diff.",
        parameters: [checkpointId],
        requestBody: { required: false, content: jsonContent(ref("RestorePlanRequest")) },
        responses: {
          200: { description: "The plan.", content: jsonContent(ref("RestorePlan")) },
          ...problems(400, 401, 403, 404, 413, 415),
        },
      },
    },
    "/api/v1/checkpoints/{id}/restore": {
      post: {
        tags: ["checkpoints"],
        operationId: "restoreCheckpoint",
        summary: "Restore a checkpoint (engineers only) as a new transition",
        description:
          "Send the task version you planned at as If-Match or expected_version (409 when the task moved since), a reason, and rewind: true to restore a checkpoint older than the committed state " +
          "(without it: 422 `stale`). Applied: version n+1 with the checkpoint's state; consumed budget never goes down; the live lease is fenced. " +
          "Refused: 422 with the refusal code as `violations[0].invariant`, restore_id and fallback_checkpoint_id. Every attempt is recorded. A retried restore_id replays the first result.",
        parameters: [checkpointId, ifMatchParam],
        requestBody: { required: true, content: jsonContent(ref("RestoreRequest")) },
        responses: {
          200: {
            description: "Restored, or replayed.",
            headers: {
              ...etagHeader,
              "Idempotent-Replayed": {
                description: "Present when the restore_id was already applied.",
                schema: { type: "string", const: "true" },
              },
            },
            content: jsonContent(ref("RestoreResult")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
  };
}
