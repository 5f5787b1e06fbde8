/** The workflows part of the OpenAPI document: the definitions tasks are pinned to. */
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import { WorkflowListSchema, WorkflowResourceSchema } from "@/lib/adapters/api/workflow-resources";

// A plain string: the registry's names are data, and a workflow published after this document was read is still served.
const workflowName = { name: "name", in: "path", required: true, schema: { type: "string", maxLength: 64 } };

export const workflowResponseSchemas: SchemaEntries = [
  ["Workflow", WorkflowResourceSchema],
  ["WorkflowList", WorkflowListSchema],
];

export function workflowPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/workflows": {
      get: {
        tags: ["workflows"],
        operationId: "listWorkflows",
        summary: "Workflow definitions, every version, with digests",
        responses: {
          200: { description: "Definitions.", content: jsonContent(ref("WorkflowList")) },
          ...problems(401, 403),
        },
      },
    },
    "/api/v1/workflows/{name}": {
      get: {
        tags: ["workflows"],
        operationId: "getWorkflow",
        summary: "One workflow definition (newest version unless ?version=)",
        parameters: [
          workflowName,
          { name: "version", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
        ],
        responses: {
          200: { description: "The definition.", content: jsonContent(ref("Workflow")) },
          ...problems(400, 401, 403, 404),
        },
      },
    },
  };
}
