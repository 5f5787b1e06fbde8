/** The workflows part of the OpenAPI document: the registry of definitions tasks are pinned to, and moving tasks between versions. */
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import {
  WorkflowListSchema,
  WorkflowMigrationPlanSchema,
  WorkflowMigrationResultSchema,
  WorkflowVersionResourceSchema,
} from "@/lib/adapters/api/workflow-resources";
import { WorkflowDefinitionDocumentSchema } from "@/lib/model/workflows/validate-definition";
import { WorkflowMigrationPlanInputSchema } from "@/lib/use-cases/workflows/plan-workflow-migration";
import { WorkflowMigrationApplyInputSchema } from "@/lib/use-cases/workflows/apply-workflow-migration";

// A plain string: the registry's names are data, and a workflow published after this document was read is still served.
const workflowName = { name: "name", in: "path", required: true, schema: { type: "string", maxLength: 64 } };
const workflowVersion = { name: "version", in: "path", required: true, schema: { type: "integer", minimum: 1 } };
const digestEtag = {
  ETag: { description: "The version's digest: immutable, like the version itself.", schema: { type: "string" } },
};

export const workflowRequestSchemas: SchemaEntries = [
  ["WorkflowDefinition", WorkflowDefinitionDocumentSchema],
  ["WorkflowMigrationPlanRequest", WorkflowMigrationPlanInputSchema],
  ["WorkflowMigrationRequest", WorkflowMigrationApplyInputSchema],
];

export const workflowResponseSchemas: SchemaEntries = [
  ["WorkflowVersion", WorkflowVersionResourceSchema],
  ["WorkflowList", WorkflowListSchema],
  ["WorkflowMigrationPlan", WorkflowMigrationPlanSchema],
  ["WorkflowMigrationResult", WorkflowMigrationResultSchema],
];

export function workflowPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/workflows": {
      get: {
        tags: ["workflows"],
        operationId: "listWorkflows",
        summary: "Every version in the registry, shipped and published, with who published it, when, and its tasks",
        responses: {
          200: { description: "Versions.", content: jsonContent(ref("WorkflowList")) },
          ...problems(401, 403),
        },
      },
      post: {
        tags: ["workflows"],
        operationId: "publishWorkflow",
        summary: "Publish a workflow definition (admins, or a token with the publish scope for workflows)",
        description:
          "The body is the definition itself, exactly as `definition` of a GET. A version is immutable and pinned by its digest. " +
          "The same name, version and content again is a replay (200, `Idempotent-Replayed: true`); other content under a published " +
          "version is a 409 naming the digest it holds; an invalid definition, or a version not above the newest, is a 422 " +
          "(`definition-invalid`) whose `problems` lists every problem at its JSON path.",
        requestBody: { required: true, content: jsonContent(ref("WorkflowDefinition")) },
        responses: {
          201: {
            description: "Published.",
            headers: { ...digestEtag, Location: { schema: { type: "string" } } },
            content: jsonContent(ref("WorkflowVersion")),
          },
          200: { description: "Already published with this content.", content: jsonContent(ref("WorkflowVersion")) },
          ...problems(400, 401, 403, 409, 413, 415, 422),
        },
      },
    },
    "/api/v1/workflows/{name}": {
      get: {
        tags: ["workflows"],
        operationId: "getWorkflow",
        summary: "The newest version of a workflow (or ?version=)",
        parameters: [
          workflowName,
          { name: "version", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
        ],
        responses: {
          200: { description: "The version.", headers: digestEtag, content: jsonContent(ref("WorkflowVersion")) },
          ...problems(400, 401, 403, 404),
        },
      },
    },
    "/api/v1/workflows/{name}/versions/{version}": {
      get: {
        tags: ["workflows"],
        operationId: "getWorkflowVersion",
        summary: "One version of a workflow",
        parameters: [workflowName, workflowVersion],
        responses: {
          200: { description: "The version.", headers: digestEtag, content: jsonContent(ref("WorkflowVersion")) },
          ...problems(400, 401, 403, 404),
        },
      },
    },
    "/api/v1/workflows/migrations/plan": {
      post: {
        tags: ["workflows"],
        operationId: "planWorkflowMigration",
        summary: "Dry run: where each task would go under a newer version, and what refuses it (engineers, admins)",
        requestBody: { required: true, content: jsonContent(ref("WorkflowMigrationPlanRequest")) },
        responses: {
          200: { description: "The plan; nothing was written.", content: jsonContent(ref("WorkflowMigrationPlan")) },
          ...problems(400, 401, 403, 413, 415),
        },
      },
    },
    "/api/v1/workflows/migrations": {
      post: {
        tags: ["workflows"],
        operationId: "applyWorkflowMigration",
        summary: "Move a plan's tasks to the newer version, each as a CAS transition, or refuse each with the reason",
        requestBody: { required: true, content: jsonContent(ref("WorkflowMigrationRequest")) },
        responses: {
          200: { description: "Each task's outcome.", content: jsonContent(ref("WorkflowMigrationResult")) },
          ...problems(400, 401, 403, 413, 415),
        },
      },
    },
  };
}
