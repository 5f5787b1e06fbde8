/** The instructions part of the OpenAPI document: the task's instruction ledger. */
import {
  etagHeader,
  jsonContent,
  type JsonSchema,
  optionalInBody,
  problems,
  ref,
  type SchemaEntries,
  taskId,
} from "@/lib/adapters/openapi/shared-components";
import { RecordInstructionInputSchema } from "@/lib/stores/instructions";
import {
  InstructionLedgerSchema,
  InstructionResourceSchema,
  RecordInstructionResultSchema,
} from "@/lib/adapters/api/instruction-resources";

export const instructionRequestSchemas: SchemaEntries = [["RecordInstructionRequest", RecordInstructionInputSchema]];

export const instructionResponseSchemas: SchemaEntries = [
  ["Instruction", InstructionResourceSchema],
  ["InstructionLedger", InstructionLedgerSchema],
  ["RecordInstructionResult", RecordInstructionResultSchema],
];

export function instructionFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  optionalInBody(
    requestSchemas.RecordInstructionRequest,
    "expected_seq",
    "The ledger seq you read (0 for an empty ledger). Required here unless sent as If-Match; if both are sent they must agree.",
  );
}

export function instructionPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tasks/{id}/instructions": {
      get: {
        tags: ["instructions"],
        operationId: "listInstructions",
        summary:
          "The task's instruction ledger, newest first, with each entry's standing and the current instruction per topic",
        description: "Bearer token, or the console session; permission instructions:read. ETag is the ledger's seq.",
        parameters: [taskId],
        responses: {
          200: { description: "The ledger.", headers: etagHeader, content: jsonContent(ref("InstructionLedger")) },
          ...problems(401, 403, 404),
        },
      },
      post: {
        tags: ["instructions"],
        operationId: "recordInstruction",
        summary: "Append an instruction to the task's ledger (compare-and-swap on its seq)",
        description:
          "Permission instructions:write (operators, admins, agents). A person's instruction is authorized; an agent's is authorized only when it relays the " +
          "requester's words (source user); its own memory (source agent_memory, the default for agents) is recorded but never authorized and never supersedes. " +
          "The latest authorized allow/forbid on a topic supersedes the older ones. A stale seq is a 409 naming the current seq; a retried instruction_id replays (200).",
        parameters: [
          taskId,
          {
            name: "If-Match",
            in: "header",
            required: false,
            schema: { type: "string" },
            description: 'The ledger seq you read, e.g. "3" ("0" when empty).',
          },
        ],
        requestBody: { required: true, content: jsonContent(ref("RecordInstructionRequest")) },
        responses: {
          201: { description: "Recorded.", headers: etagHeader, content: jsonContent(ref("RecordInstructionResult")) },
          200: {
            description: "A retry of a recorded instruction_id: nothing written.",
            headers: etagHeader,
            content: jsonContent(ref("RecordInstructionResult")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415),
        },
      },
    },
  };
}
