import { z } from "zod";
import { TransitionLogQuerySchema } from "@/lib/api/context";
import {
  FieldErrorSchema,
  InvariantViolationSchema,
  NextStepsSchema,
  ProblemSchema,
  TaskPageSchema,
  TaskResourceSchema,
  TransitionPageSchema,
  TransitionResourceSchema,
  TransitionResultSchema,
  WorkflowListSchema,
  WorkflowResourceSchema,
} from "@/lib/api/resources";
import { CreateTaskInputSchema, ListTasksQuerySchema, TransitionInputSchema } from "@/lib/engine/tasks";
import { TaskPatchSchema, TaskStateSchema } from "@/lib/engine/task-state";
import { workflowNames } from "@/lib/engine/workflows";

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the zod schemas the
 * engine validates requests with and the API builds responses with
 * (z.toJSONSchema), so the document and the behaviour share one source.
 * Request bodies are converted as zod *input* (defaults make a field
 * optional), responses as *output*.
 */
type JsonSchema = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function componentSchemas(entries: Array<[string, z.ZodType]>, io: "input" | "output"): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of entries) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ zodSchema, jsonSchema }) => {
      // A response object may gain fields later: only strict (fixed-schema) objects promise none.
      const def = zodSchema._zod.def;
      if (io === "output" && def.type === "object" && !def.catchall && jsonSchema.additionalProperties === false) delete jsonSchema.additionalProperties;
    },
  });
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, stripMeta(s as JsonSchema)]));
}

/** `$schema` and `$id` are noise inside components: the document fixes the dialect. */
function stripMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function queryParameters(schema: z.ZodObject): JsonSchema[] {
  return Object.entries(schema.shape).map(([name, member]) => {
    const s = stripMeta(z.toJSONSchema(member as z.ZodType, { io: "input" }) as JsonSchema);
    const { description, ...rest } = s;
    return { name, in: "query", required: !(member as z.ZodType).safeParse(undefined).success, schema: rest, ...(description ? { description } : {}) };
  });
}

const problemStatuses = {
  400: "Invalid request: `errors` names each offending field.",
  401: "Missing, malformed, unknown or revoked bearer token.",
  403: "The token's role lacks the permission, or the actor may not take this edge.",
  404: "No such task or workflow.",
  409: "Version conflict (`current_version`) or an id reused for a different request.",
  413: "The body is larger than the server's limit (`max_bytes`).",
  415: "The body is not application/json.",
  422: "The change would break an invariant: `violations` names each one.",
  500: "Unexpected server error; `request_id` is in the server log.",
} as const;
type ProblemStatus = keyof typeof problemStatuses;

function problems(...statuses: ProblemStatus[]): Record<string, JsonSchema> {
  return Object.fromEntries([...statuses, 500 as const].map((s) => [String(s), { $ref: `#/components/responses/Problem${s}` }]));
}

const jsonContent = (schema: JsonSchema) => ({ "application/json": { schema } });
const etagHeader = { ETag: { description: 'The task version, quoted: send it back as If-Match.', schema: { type: "string", example: '"5"' } } };

function buildDocument(): JsonSchema {
  const requestSchemas = componentSchemas(
    [
      ["CreateTaskRequest", CreateTaskInputSchema],
      ["TransitionRequest", TransitionInputSchema],
      ["TaskPatch", TaskPatchSchema],
    ],
    "input",
  );
  // expected_version may come from If-Match instead; the API fills it in before validating.
  const transitionRequest = requestSchemas.TransitionRequest as { required?: string[]; properties?: Record<string, JsonSchema> } | undefined;
  if (transitionRequest?.required) {
    const required = transitionRequest.required.filter((f) => f !== "expected_version");
    if (required.length > 0) transitionRequest.required = required;
    else delete transitionRequest.required;
  }
  if (transitionRequest?.properties?.expected_version) {
    transitionRequest.properties.expected_version.description = "The version the change is based on. Required here unless sent as If-Match; if both are sent they must agree.";
  }
  const responseSchemas = componentSchemas(
    [
      ["Task", TaskResourceSchema],
      ["TaskState", TaskStateSchema],
      ["TaskPatch", TaskPatchSchema],
      ["Transition", TransitionResourceSchema],
      ["TaskPage", TaskPageSchema],
      ["TransitionPage", TransitionPageSchema],
      ["TransitionResult", TransitionResultSchema],
      ["NextSteps", NextStepsSchema],
      ["Workflow", WorkflowResourceSchema],
      ["WorkflowList", WorkflowListSchema],
      ["Problem", ProblemSchema],
      ["FieldError", FieldErrorSchema],
      ["InvariantViolation", InvariantViolationSchema],
    ],
    "output",
  );

  const taskId = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Task id." };
  const workflowName = { name: "name", in: "path", required: true, schema: { type: "string", enum: workflowNames } };

  return {
    openapi: "3.1.0",
    info: {
      title: "Verity agent API",
      version: "1.0.0",
      description:
        "Durable, conflict-safe task state for AI agents. Every write is a compare-and-swap on the task version " +
        '(ETag `"<version>"`, sent back as If-Match or expected_version). Errors are RFC 9457 application/problem+json.',
    },
    servers: [{ url: "/" }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: "tasks" }, { name: "workflows" }, { name: "meta" }],
    paths: {
      "/api/v1/tasks": {
        post: {
          tags: ["tasks"],
          operationId: "createTask",
          summary: "Create a task",
          description: "Idempotent on task_id: the same task_id with the same body returns the existing task (200, Idempotent-Replayed: true); a different body is a 409.",
          requestBody: { required: true, content: jsonContent(ref("CreateTaskRequest")) },
          responses: {
            201: { description: "Created.", headers: { ...etagHeader, Location: { schema: { type: "string" } } }, content: jsonContent(ref("Task")) },
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
          responses: { 200: { description: "One keyset page.", content: jsonContent(ref("TaskPage")) }, ...problems(400, 401, 403) },
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
            "Omit `to` for an in-place update. Send the version you read as If-Match (\"5\", 5 or W/\"5\") or expected_version. " +
            "A retry with the same transition_id returns the first result (Idempotent-Replayed: true) and writes nothing.",
          parameters: [taskId, { name: "If-Match", in: "header", required: false, schema: { type: "string", example: '"5"' } }],
          requestBody: { required: true, content: jsonContent(ref("TransitionRequest")) },
          responses: {
            200: {
              description: "Applied, or replayed.",
              headers: { ...etagHeader, "Idempotent-Replayed": { description: "Present when the transition_id was already applied.", schema: { type: "string", const: "true" } } },
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
          responses: { 200: { description: "One page.", content: jsonContent(ref("TransitionPage")) }, ...problems(400, 401, 403, 404) },
        },
      },
      "/api/v1/tasks/{id}/next": {
        get: {
          tags: ["tasks"],
          operationId: "getNextSteps",
          summary: "The transitions the caller may take now, each with what blocks it",
          parameters: [taskId],
          responses: { 200: { description: "Next steps.", headers: etagHeader, content: jsonContent(ref("NextSteps")) }, ...problems(401, 403, 404) },
        },
      },
      "/api/v1/workflows": {
        get: {
          tags: ["workflows"],
          operationId: "listWorkflows",
          summary: "Workflow definitions, every version, with digests",
          responses: { 200: { description: "Definitions.", content: jsonContent(ref("WorkflowList")) }, ...problems(401, 403) },
        },
      },
      "/api/v1/workflows/{name}": {
        get: {
          tags: ["workflows"],
          operationId: "getWorkflow",
          summary: "One workflow definition (newest version unless ?version=)",
          parameters: [workflowName, { name: "version", in: "query", required: false, schema: { type: "integer", minimum: 1 } }],
          responses: { 200: { description: "The definition.", content: jsonContent(ref("Workflow")) }, ...problems(400, 401, 403, 404) },
        },
      },
      "/api/v1/openapi.json": {
        get: {
          tags: ["meta"],
          operationId: "getOpenApi",
          summary: "This document",
          security: [],
          responses: { 200: { description: "OpenAPI 3.1.", content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
    },
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API token: Authorization: Bearer <token>." } },
      schemas: { ...requestSchemas, ...responseSchemas },
      responses: Object.fromEntries(
        Object.entries(problemStatuses).map(([status, description]) => [
          `Problem${status}`,
          {
            description,
            ...(status === "401" ? { headers: { "WWW-Authenticate": { schema: { type: "string", example: 'Bearer realm="verity"' } } } } : {}),
            content: { "application/problem+json": { schema: ref("Problem") } },
          },
        ]),
      ),
    },
  };
}

let cached: JsonSchema | undefined;

export function getOpenApiDocument(): JsonSchema {
  cached ??= buildDocument();
  return cached;
}
