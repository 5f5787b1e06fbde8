/** The delegations part of the OpenAPI document: who besides a task's owner may act on it. */
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
  taskId,
} from "@/lib/adapters/openapi/shared-components";
import { DelegateTaskInputSchema } from "@/lib/use-cases/agents/delegate-task";

export const delegationRequestSchemas: SchemaEntries = [["DelegateTaskRequest", DelegateTaskInputSchema]];

const delegation = {
  type: "object",
  properties: {
    id: { type: "string" },
    task_id: { type: "string" },
    identity: { type: "string" },
    granted_by: { type: "string" },
    created_at: { type: "string", format: "date-time" },
    revoked_at: { type: ["string", "null"], format: "date-time" },
    active: { type: "boolean" },
  },
  required: ["id", "task_id", "identity", "granted_by", "created_at", "revoked_at", "active"],
};

export function delegationPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tasks/{id}/delegations": {
      get: {
        tags: ["tasks"],
        operationId: "listDelegations",
        summary: "The task's owner and every delegation, live and ended",
        description:
          "A task belongs to the identity that created it and the agents its owner delegates to. Another agent's task is a 404, as if it did not exist.",
        parameters: [taskId],
        responses: {
          200: {
            description: "The owner and the delegations.",
            content: jsonContent({
              type: "object",
              properties: { owner: { type: "string" }, items: { type: "array", items: delegation } },
              required: ["owner", "items"],
            }),
          },
          ...problems(401, 403, 404),
        },
      },
      post: {
        tags: ["tasks"],
        operationId: "delegateTask",
        summary: "Let another agent act on the task (owner only)",
        parameters: [taskId],
        requestBody: { required: true, content: jsonContent(ref("DelegateTaskRequest")) },
        responses: {
          201: { description: "Delegated.", content: jsonContent(delegation) },
          200: { description: "The identity was a delegate already.", content: jsonContent(delegation) },
          ...problems(400, 401, 403, 404, 413, 415),
        },
      },
    },
    "/api/v1/tasks/{id}/delegations/{delegationId}": {
      delete: {
        tags: ["tasks"],
        operationId: "undelegateTask",
        summary: "End a delegation (owner only); ending an ended one answers it as it is",
        parameters: [taskId, { name: "delegationId", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          200: { description: "The delegation, ended.", content: jsonContent(delegation) },
          ...problems(401, 403, 404),
        },
      },
    },
  };
}
