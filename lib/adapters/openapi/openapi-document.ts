import {
  alertFieldsOptionalInBody,
  alertPaths,
  alertRequestSchemas,
  alertResponseSchemas,
} from "@/lib/adapters/openapi/alert-paths";
import { delegationPaths, delegationRequestSchemas } from "@/lib/adapters/openapi/delegation-paths";
import { auditPaths, auditRequestSchemas, auditResponseSchemas } from "@/lib/adapters/openapi/audit-paths";
import {
  checkpointFieldsOptionalInBody,
  checkpointPaths,
  checkpointRequestSchemas,
  checkpointResponseSchemas,
} from "@/lib/adapters/openapi/checkpoint-paths";
import { eventPaths, eventRequestSchemas, eventResponseSchemas } from "@/lib/adapters/openapi/event-paths";
import {
  executionFieldsOptionalInBody,
  executionPaths,
  executionRequestSchemas,
  executionResponseSchemas,
  taskExecutionPaths,
} from "@/lib/adapters/openapi/execution-paths";
import {
  instructionFieldsOptionalInBody,
  instructionPaths,
  instructionRequestSchemas,
  instructionResponseSchemas,
} from "@/lib/adapters/openapi/instruction-paths";
import {
  leaseFieldsOptionalInBody,
  leasePaths,
  leaseRequestSchemas,
  leaseResponseSchemas,
} from "@/lib/adapters/openapi/lease-paths";
import { monitorPaths, monitorRequestSchemas, monitorResponseSchemas } from "@/lib/adapters/openapi/monitor-paths";
import {
  componentSchemas,
  type JsonSchema,
  problemResponses,
  problemSchemas,
} from "@/lib/adapters/openapi/shared-components";
import {
  taskFieldsOptionalInBody,
  taskPaths,
  taskRequestSchemas,
  taskResponseSchemas,
} from "@/lib/adapters/openapi/task-paths";
import { workflowPaths, workflowRequestSchemas, workflowResponseSchemas } from "@/lib/adapters/openapi/workflow-paths";
import { toolPaths, toolRequestSchemas, toolResponseSchemas } from "@/lib/adapters/openapi/tool-paths";
import {
  retentionFieldsOptionalInBody,
  retentionPaths,
  retentionRequestSchemas,
  retentionResponseSchemas,
} from "@/lib/adapters/openapi/retention-paths";
import { graphPaths, graphRequestSchemas, graphResponseSchemas } from "@/lib/adapters/openapi/graph-paths";

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the zod schemas the
 * engine validates requests with and the API builds responses with
 * (z.toJSONSchema), so the document and the behaviour share one source.
 * Request bodies are converted as zod *input* (defaults make a field
 * optional), responses as *output*. Each resource's paths and component
 * schemas are in lib/adapters/openapi/<resource>-paths.ts; this puts them
 * together in the document's order.
 */
function buildDocument(): JsonSchema {
  const requestSchemas = componentSchemas(
    [
      ...taskRequestSchemas,
      ...executionRequestSchemas,
      ...leaseRequestSchemas,
      ...delegationRequestSchemas,
      ...eventRequestSchemas,
      ...checkpointRequestSchemas,
      ...instructionRequestSchemas,
      ...alertRequestSchemas,
      ...monitorRequestSchemas,
      ...workflowRequestSchemas,
      ...toolRequestSchemas,
      ...graphRequestSchemas,
      ...auditRequestSchemas,
      ...retentionRequestSchemas,
    ],
    "input",
  );
  instructionFieldsOptionalInBody(requestSchemas);
  alertFieldsOptionalInBody(requestSchemas);
  taskFieldsOptionalInBody(requestSchemas);
  executionFieldsOptionalInBody(requestSchemas);
  checkpointFieldsOptionalInBody(requestSchemas);
  leaseFieldsOptionalInBody(requestSchemas);
  retentionFieldsOptionalInBody(requestSchemas);
  const responseSchemas = componentSchemas(
    [
      ...taskResponseSchemas,
      ...workflowResponseSchemas,
      ...toolResponseSchemas,
      ...problemSchemas,
      ...executionResponseSchemas,
      ...leaseResponseSchemas,
      ...eventResponseSchemas,
      ...checkpointResponseSchemas,
      ...auditResponseSchemas,
      ...instructionResponseSchemas,
      ...alertResponseSchemas,
      ...monitorResponseSchemas,
      ...graphResponseSchemas,
      ...retentionResponseSchemas,
    ],
    "output",
  );

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
    tags: [
      { name: "tasks" },
      { name: "executions" },
      { name: "leases" },
      { name: "events" },
      { name: "checkpoints" },
      { name: "audit" },
      { name: "instructions" },
      { name: "alerts" },
      { name: "workflows" },
      { name: "tools" },
      { name: "graph" },
      { name: "meta" },
    ],
    paths: {
      ...taskPaths(),
      ...taskExecutionPaths(),
      ...instructionPaths(),
      ...executionPaths(),
      ...leasePaths(),
      ...delegationPaths(),
      ...eventPaths(),
      ...checkpointPaths(),
      ...auditPaths(),
      ...retentionPaths(),
      ...alertPaths(),
      ...monitorPaths(),
      ...workflowPaths(),
      ...toolPaths(),
      ...graphPaths(),
      "/api/v1/openapi.json": {
        get: {
          tags: ["meta"],
          operationId: "getOpenApi",
          summary: "This document",
          security: [],
          responses: {
            200: { description: "OpenAPI 3.1.", content: { "application/json": { schema: { type: "object" } } } },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API token: Authorization: Bearer <token>." },
      },
      schemas: { ...requestSchemas, ...responseSchemas },
      responses: problemResponses(),
    },
  };
}

let cached: JsonSchema | undefined;

export function getOpenApiDocument(): JsonSchema {
  cached ??= buildDocument();
  return cached;
}
