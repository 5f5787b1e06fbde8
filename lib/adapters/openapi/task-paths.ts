/** The tasks part of the OpenAPI document: create, list, read, transition, next steps. */
import {
  etagHeader,
  fencingTokenParam,
  ifMatchParam,
  jsonContent,
  type JsonSchema,
  optionalInBody,
  problems,
  queryParameters,
  ref,
  type SchemaEntries,
  taskId,
  tokenDescription,
  versionDescription,
} from "@/lib/adapters/openapi/shared-components";
import { CreateTaskInputSchema } from "@/lib/use-cases/tasks/create-task";
import { TransitionInputSchema } from "@/lib/stores/tasks/task-transitions";
import { TaskPatchSchema, TaskStateSchema } from "@/lib/model/tasks/task-state";
import {
  NextStepsSchema,
  TaskPageSchema,
  TaskResourceSchema,
  TransitionPageSchema,
  TransitionResourceSchema,
  TransitionResultSchema,
} from "@/lib/adapters/api/task-resources";
import { ListTasksQuerySchema } from "@/lib/use-cases/tasks/list-tasks";
import { TransitionLogQuerySchema } from "@/lib/adapters/api/context";

export const taskRequestSchemas: SchemaEntries = [
  ["CreateTaskRequest", CreateTaskInputSchema],
  ["TransitionRequest", TransitionInputSchema],
  ["TaskPatch", TaskPatchSchema],
];

export const taskResponseSchemas: SchemaEntries = [
  ["Task", TaskResourceSchema],
  ["TaskState", TaskStateSchema],
  ["TaskPatch", TaskPatchSchema],
  ["Transition", TransitionResourceSchema],
  ["TaskPage", TaskPageSchema],
  ["TransitionPage", TransitionPageSchema],
  ["TransitionResult", TransitionResultSchema],
  ["NextSteps", NextStepsSchema],
];

export function taskFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  optionalInBody(requestSchemas.TransitionRequest, "expected_version", versionDescription);
  optionalInBody(requestSchemas.TransitionRequest, "fencing_token", tokenDescription);
}

export function taskPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tasks": {
      post: {
        tags: ["tasks"],
        operationId: "createTask",
        summary: "Create a task",
        description:
          "Idempotent on task_id: the same task_id with the same body returns the existing task (200, Idempotent-Replayed: true); a different body is a 409.",
        requestBody: { required: true, content: jsonContent(ref("CreateTaskRequest")) },
        responses: {
          201: {
            description: "Created.",
            headers: { ...etagHeader, Location: { schema: { type: "string" } } },
            content: jsonContent(ref("Task")),
          },
          200: {
            description: "Already created by an identical request.",
            headers: { ...etagHeader, "Idempotent-Replayed": { schema: { type: "string", const: "true" } } },
            content: jsonContent(ref("Task")),
          },
          ...problems(400, 401, 403, 409, 413, 415, 422),
        },
      },
      get: {
        tags: ["tasks"],
        operationId: "listTasks",
        summary: "List tasks, newest activity first",
        parameters: queryParameters(ListTasksQuerySchema),
        responses: {
          200: { description: "One keyset page.", content: jsonContent(ref("TaskPage")) },
          ...problems(400, 401, 403),
        },
      },
    },
    "/api/v1/tasks/{id}": {
      get: {
        tags: ["tasks"],
        operationId: "getTask",
        summary: "Read a task",
        parameters: [taskId, { name: "If-None-Match", in: "header", required: false, schema: { type: "string" } }],
        responses: {
          200: { description: "The task.", headers: etagHeader, content: jsonContent(ref("Task")) },
          304: { description: "Unchanged since the ETag in If-None-Match.", headers: etagHeader },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/tasks/{id}/transitions": {
      post: {
        tags: ["tasks"],
        operationId: "transitionTask",
        summary: "Change a task's status and/or state under compare-and-swap",
        description:
          'Omit `to` for an in-place update. Send the version you read as If-Match ("5", 5 or W/"5") or expected_version. ' +
          "A retry with the same transition_id returns the first result (Idempotent-Replayed: true) and writes nothing.",
        parameters: [taskId, ifMatchParam, fencingTokenParam],
        requestBody: { required: true, content: jsonContent(ref("TransitionRequest")) },
        responses: {
          200: {
            description: "Applied, or replayed.",
            headers: {
              ...etagHeader,
              "Idempotent-Replayed": {
                description: "Present when the transition_id was already applied.",
                schema: { type: "string", const: "true" },
              },
            },
            content: jsonContent(ref("TransitionResult")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
      get: {
        tags: ["tasks"],
        operationId: "listTransitions",
        summary: "The task's transition log, oldest first",
        parameters: [taskId, ...queryParameters(TransitionLogQuerySchema)],
        responses: {
          200: { description: "One page.", content: jsonContent(ref("TransitionPage")) },
          ...problems(400, 401, 403, 404),
        },
      },
    },
    "/api/v1/tasks/{id}/next": {
      get: {
        tags: ["tasks"],
        operationId: "getNextSteps",
        summary: "The transitions the caller may take now, each with what blocks it",
        parameters: [taskId],
        responses: {
          200: { description: "Next steps.", headers: etagHeader, content: jsonContent(ref("NextSteps")) },
          ...problems(401, 403, 404),
        },
      },
    },
  };
}
