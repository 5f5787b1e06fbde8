/** The tools part of the OpenAPI document: the tool registry, worker lookups, and the http lookup contract as a callback. */
import { z } from "zod";
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import {
  LookupResourceSchema,
  ToolDefinitionDocumentSchema,
  ToolDetailSchema,
  ToolListSchema,
  ToolVersionResourceSchema,
} from "@/lib/adapters/api/tool-resources";
import { AnswerLookupInputSchema } from "@/lib/use-cases/tools/answer-lookup";
import { ClaimLookupInputSchema } from "@/lib/use-cases/tools/claim-lookup";
import { RetireToolInputSchema } from "@/lib/use-cases/tools/retire-tool";
import { LookupAnswerSchema } from "@/lib/connectors/tool-lookup/http-lookup";

// A plain string: tool names are data, and a tool registered after this document was read is still served.
const toolName = { name: "name", in: "path", required: true, schema: { type: "string", maxLength: 64 } };

const LookupQuestionSchema = z.object({
  tool: z.string(),
  tool_version: z.int(),
  idempotency_key: z.string().meta({ description: "What the provider holds under this key is the question." }),
  execution_id: z.string(),
  task_id: z.string(),
  request: z.record(z.string(), z.unknown()).meta({ description: "The call's request as recorded with its intent." }),
});

const signatureHeader = {
  "Verity-Signature": {
    required: true,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under the lookup secret (VERITY_LOOKUP_SECRET), the outbox\'s scheme. ' +
      "Verity signs its question; the tool owner signs its answer with the same secret, and Verity treats an unsigned, wrongly signed " +
      "or older than five minutes answer as unknown.",
    schema: { type: "string" },
  },
};

export const toolRequestSchemas: SchemaEntries = [
  ["ToolDefinition", ToolDefinitionDocumentSchema],
  ["RetireToolRequest", RetireToolInputSchema],
  ["ClaimLookupRequest", ClaimLookupInputSchema],
  ["AnswerLookupRequest", AnswerLookupInputSchema],
  ["ToolLookupAnswer", LookupAnswerSchema],
];

export const toolResponseSchemas: SchemaEntries = [
  ["ToolVersion", ToolVersionResourceSchema],
  ["ToolList", ToolListSchema],
  ["ToolDetail", ToolDetailSchema],
  ["Lookup", LookupResourceSchema],
  ["ToolLookupQuestion", LookupQuestionSchema],
];

export function toolPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tools": {
      get: {
        tags: ["tools"],
        operationId: "listTools",
        summary: "Every tool, built in and registered, with its newest version",
        responses: { 200: { description: "Tools.", content: jsonContent(ref("ToolList")) }, ...problems(401, 403) },
      },
      post: {
        tags: ["tools"],
        operationId: "registerTool",
        summary: "Register a tool or a new version of one (admins, or a token with the publish scope for tools)",
        description:
          "The body is the definition itself (docs/tools.md). A version is immutable: the same name, version and content again is a replay " +
          "(200, `Idempotent-Replayed: true`); other content under a registered version is a 409; an invalid definition, or a version not above " +
          "the newest, is a 422 (`definition-invalid`) whose `problems` lists every problem at its JSON path. New intents are recorded under " +
          "the newest version; calls recorded earlier keep theirs.",
        requestBody: { required: true, content: jsonContent(ref("ToolDefinition")) },
        responses: {
          201: { description: "Registered.", content: jsonContent(ref("ToolVersion")) },
          200: { description: "Already registered with this content.", content: jsonContent(ref("ToolVersion")) },
          ...problems(400, 401, 403, 409, 413, 415, 422),
        },
        callbacks: {
          effectLookup: {
            "{$request.body#/reconciliation/url}": {
              post: {
                summary: "Verity asks an http-reconciled tool's owner what it holds under an idempotency key",
                description:
                  "Sent by the reconciler (and before a success report of an irreversible call is believed, and before a reviewer accepts " +
                  "evidence) for a tool whose reconciliation is `http`. `found` settles the call by the record (compared field by field with " +
                  "the request's identity_fields, and its idempotency_key with the call's); `not_found` lets the agent retry under the same key; " +
                  "`unknown`, a non-200, a timeout or a bad signature sends the call to people.",
                parameters: [{ name: "Verity-Signature", in: "header", ...signatureHeader["Verity-Signature"] }],
                requestBody: { required: true, content: jsonContent(ref("ToolLookupQuestion")) },
                responses: {
                  200: {
                    description: "The tool owner's answer, signed.",
                    headers: signatureHeader,
                    content: jsonContent(ref("ToolLookupAnswer")),
                  },
                },
              },
            },
          },
        },
      },
    },
    "/api/v1/tools/{name}": {
      get: {
        tags: ["tools"],
        operationId: "getTool",
        summary: "One tool: its newest version and every version, newest first",
        parameters: [toolName],
        responses: {
          200: { description: "The tool.", content: jsonContent(ref("ToolDetail")) },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/tools/{name}/retire": {
      post: {
        tags: ["tools"],
        operationId: "retireTool",
        summary: "Retire a tool: no new intents (422 tool_not_retired); calls already recorded settle as before",
        parameters: [toolName],
        requestBody: { required: true, content: jsonContent(ref("RetireToolRequest")) },
        responses: {
          200: { description: "The tool, retired.", content: jsonContent(ref("ToolDetail")) },
          ...problems(400, 401, 403, 404, 422),
        },
      },
    },
    "/api/v1/tools/{name}/lookups/claim": {
      post: {
        tags: ["tools"],
        operationId: "claimLookup",
        summary: "A worker of a worker-reconciled tool claims the oldest open lookup under a lease",
        description:
          "An agent token whose scopes cover the tool. The lookup carries the call's request and a fencing token; a claim whose lease runs " +
          "out (a killed worker) is claimable again with a greater token. Unanswered by `deadline_at`, the call goes to the review queue.",
        parameters: [toolName],
        requestBody: { required: false, content: jsonContent(ref("ClaimLookupRequest")) },
        responses: {
          200: { description: "Claimed.", content: jsonContent(ref("Lookup")) },
          204: { description: "Nothing to answer now." },
          ...problems(400, 401, 403, 404),
        },
      },
    },
    "/api/v1/lookups/{id}/answer": {
      post: {
        tags: ["tools"],
        operationId: "answerLookup",
        summary:
          "The claiming worker answers found (with the provider's record), not_found or unknown, under its fencing token",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        requestBody: { required: true, content: jsonContent(ref("AnswerLookupRequest")) },
        responses: {
          200: {
            description: "Answered; `reconciled` is the reconciler's pass over the call right after.",
            content: jsonContent({
              type: "object",
              properties: { lookup: ref("Lookup"), reconciled: { type: ["object", "null"] } },
              required: ["lookup", "reconciled"],
            }),
          },
          ...problems(400, 401, 403, 404, 409),
        },
      },
    },
  };
}
