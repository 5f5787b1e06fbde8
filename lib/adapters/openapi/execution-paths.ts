/** The executions part of the OpenAPI document: the write-ahead intent, sent, the outcome, and the ledger. */
import {
  etagHeader,
  fencingTokenParam,
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
import { RecordIntentInputSchema } from "@/lib/use-cases/executions/record-intent";
import { MarkSentInputSchema } from "@/lib/use-cases/executions/mark-sent";
import { RecordOutcomeInputSchema } from "@/lib/use-cases/executions/record-outcome";
import { PerformToolCallInputSchema } from "@/lib/use-cases/executions/perform-tool-call";
import {
  ExecutionDetailSchema,
  ExecutionEventResourceSchema,
  ExecutionListSchema,
  ExecutionResourceSchema,
  IntentResultSchema,
  OutcomeResultSchema,
} from "@/lib/adapters/api/execution-resources";

const executionId = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "Execution id.",
};

export const executionRequestSchemas: SchemaEntries = [
  ["RecordIntentRequest", RecordIntentInputSchema],
  ["MarkSentRequest", MarkSentInputSchema],
  ["RecordOutcomeRequest", RecordOutcomeInputSchema],
  ["PerformToolCallRequest", PerformToolCallInputSchema],
];

export const executionResponseSchemas: SchemaEntries = [
  ["Execution", ExecutionResourceSchema],
  ["ExecutionEvent", ExecutionEventResourceSchema],
  ["ExecutionDetail", ExecutionDetailSchema],
  ["ExecutionList", ExecutionListSchema],
  ["IntentResult", IntentResultSchema],
  ["OutcomeResult", OutcomeResultSchema],
];

export function executionFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  optionalInBody(requestSchemas.RecordIntentRequest, "expected_version", versionDescription);
  optionalInBody(requestSchemas.RecordIntentRequest, "fencing_token", tokenDescription);
  optionalInBody(requestSchemas.PerformToolCallRequest, "expected_version", versionDescription);
  optionalInBody(requestSchemas.PerformToolCallRequest, "fencing_token", tokenDescription);
  optionalInBody(
    requestSchemas.RecordOutcomeRequest,
    "fencing_token",
    "Your lease's fencing token; or send it as Fencing-Token. If both are sent they must agree. A stale token still records the outcome but does not move the task: see lease_conflict in the response.",
  );
}

/** Under /tasks/{id}: the document lists it with the task's routes, before its instructions; the execution's own routes come after. */
export function taskExecutionPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/tasks/{id}/executions": {
      post: {
        tags: ["executions"],
        operationId: "recordIntent",
        summary: "Record the intent to call a tool, before calling it",
        description:
          "Write-ahead: the intent and the task's move to WAITING_FOR_TOOL commit together under compare-and-swap, before anything leaves. " +
          '`proceed`: call the tool with execution.idempotency_key, after POST …/sent, or send `"send": true` to have the attempt marked SENT with the intent ' +
          "(one request and one commit fewer; the lease rule and the instruction guard are checked the same; if the answer is lost, the attempt is SENT and waits for reconciliation). " +
          "`receipt`: this tool_call_id already succeeded; do not call again. " +
          "A retry of an intent never sent answers `proceed` with the same attempt (200). After a known failure the same tool_call_id starts a new attempt " +
          "with the same key (201): make it when the failed execution's `retry.safe` is true (the provider said nothing was applied, or the reconciler " +
          "established it never was, and the tool's attempt limit is not reached); after an unknown outcome it is refused " +
          "(422 unknown_outcome_reconciled_before_retry) until the server has reconciled it.",
        parameters: [taskId, ifMatchParam, fencingTokenParam],
        requestBody: { required: true, content: jsonContent(ref("RecordIntentRequest")) },
        responses: {
          201: {
            description: "Intent recorded: proceed.",
            headers: etagHeader,
            content: jsonContent(ref("IntentResult")),
          },
          200: {
            description: "Nothing written: a receipt, or an intent recorded before and never sent.",
            headers: { ...etagHeader, "Idempotent-Replayed": { schema: { type: "string", const: "true" } } },
            content: jsonContent(ref("IntentResult")),
          },
          202: {
            description:
              "`blocked`: an irreversible call frozen for review because of the task's instructions (it relies on a superseded or unauthorized instruction, " +
              "or the current one on its topic forbids it). Nothing may be sent; a person decides in the review queue. A retry answers the same.",
            headers: etagHeader,
            content: jsonContent(ref("IntentResult")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
      get: {
        tags: ["executions"],
        operationId: "listExecutions",
        summary: "The task's execution ledger, oldest first",
        parameters: [taskId],
        responses: {
          200: { description: "Every tool call of the task.", content: jsonContent(ref("ExecutionList")) },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/tasks/{id}/tool-calls": {
      post: {
        tags: ["executions"],
        operationId: "performToolCall",
        summary: "Have Verity make the tool call, through the connector it holds",
        description:
          "For the built-in tools (payments.refund, crm.add_note), whose provider credentials Verity holds and the agent need not. The same ledger as " +
          "recording the intent yourself: the intent, its checkpoint and its SENT mark commit together (lease, instruction guard, budget and workflow " +
          "checked as for POST …/executions), Verity calls the provider under the execution's idempotency key, and records the provider's answer " +
          "(a success stands on the provider's answer to Verity's own request: no lookup). 201 `performed` with `outcome` succeeded, failed (the provider " +
          "said nothing happened; retry with the same tool_call_id when execution.retry.safe) or unknown (the task waits in RECONCILING; the reconciler " +
          "settles it). 200 `receipt`: already succeeded, nothing called. 202 `blocked`: frozen for people, nothing called. A tool Verity holds no " +
          "connector for is 422 tool_has_connector: call it yourself.",
        parameters: [taskId, ifMatchParam, fencingTokenParam],
        requestBody: { required: true, content: jsonContent(ref("PerformToolCallRequest")) },
        responses: {
          201: {
            description:
              "Called: the outcome as recorded, with the task after it (`lease_conflict` as for an outcome).",
            headers: etagHeader,
            content: jsonContent({
              allOf: [
                ref("OutcomeResult"),
                {
                  type: "object",
                  required: ["kind", "outcome"],
                  properties: {
                    kind: { type: "string", const: "performed" },
                    outcome: { type: "string", enum: ["succeeded", "failed", "unknown"] },
                  },
                },
              ],
            }),
          },
          200: {
            description: "`receipt`: this tool_call_id already succeeded; nothing was called.",
            headers: { ...etagHeader, "Idempotent-Replayed": { schema: { type: "string", const: "true" } } },
            content: jsonContent(ref("IntentResult")),
          },
          202: {
            description:
              "`blocked`: frozen for review because of the task's instructions or an approval asked; nothing was called.",
            headers: etagHeader,
            content: jsonContent(ref("IntentResult")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
  };
}

export function executionPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/executions/{id}": {
      get: {
        tags: ["executions"],
        operationId: "getExecution",
        summary: "One execution with its events",
        parameters: [executionId],
        responses: {
          200: { description: "The execution.", content: jsonContent(ref("ExecutionDetail")) },
          ...problems(401, 403, 404),
        },
      },
    },
    "/api/v1/executions/{id}/sent": {
      post: {
        tags: ["executions"],
        operationId: "markSent",
        summary: "The request is about to leave",
        description:
          "From here until an outcome is recorded, the effect may or may not exist; a worker that dies now leaves a SENT execution the server reconciles. Idempotent for the lease that sent it. " +
          "Only the task's current lease may send: send your fencing_token (without one, the lease the attempt was recorded under is assumed); a fenced worker gets 409 lease-conflict and must not send.",
        parameters: [executionId],
        requestBody: { required: true, content: jsonContent(ref("MarkSentRequest")) },
        responses: {
          200: { description: "SENT.", content: jsonContent(ref("Execution")) },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
    "/api/v1/executions/{id}/outcome": {
      post: {
        tags: ["executions"],
        operationId: "recordOutcome",
        summary: "Record what the tool call did: succeeded, failed or unknown",
        description:
          "succeeded needs evidence naming this execution (its id, e.g. in metadata.execution_id, or its idempotency key), else 422 success_requires_matching_evidence. " +
          "For an irreversible tool (payments.refund) the server then asks the provider for its record under the key: a matching record is added to the " +
          "evidence (confirmed_at_provider); nothing under the key is 422 success_confirmed_by_provider and a record of something else 422 " +
          "success_matches_provider_record (an effect_mismatch alert raised), the execution staying SENT either way; a provider that cannot be asked " +
          "records OUTCOME_UNKNOWN and the task waits in RECONCILING for the reconciler's lookup. " +
          "failed means the provider stated nothing happened; a timeout or lost answer is unknown, and sends the task to RECONCILING. " +
          "The task moves in the same transaction. A repeated report of the same outcome is answered again and writes nothing. " +
          "A failure that would be safe to retry but is the tool's last attempt (execution.retry.code attempt_limit) goes to a review instead: the execution " +
          "NEEDS_HUMAN, the task WAITING_FOR_HUMAN. succeeded for an execution already settled FAILED or RECONCILED_FAILED (another request under the key " +
          "applied it) is checked against the provider's record under the key and settles it RECONCILED_SUCCEEDED, both records as evidence, the task moved on " +
          "as after a success and an effect_found_after_failure alert resolved; when the provider has nothing under the key (422 success_confirmed_by_provider) " +
          "or a record of something else (422 success_matches_provider_record, an effect_mismatch alert raised) the failure stands. " +
          "With a fencing token that is no longer the task's lease (it expired and another worker took the task over), the outcome is still recorded — " +
          "the provider's answer is a fact, not the worker's opinion of the task — but the task is not moved: 200 with `lease_conflict` set and the task " +
          "as it is. Stop working on the task; the lease holder continues from the recorded outcome (its intent for the same tool_call_id answers `receipt`).",
        parameters: [executionId, fencingTokenParam],
        requestBody: { required: true, content: jsonContent(ref("RecordOutcomeRequest")) },
        responses: {
          200: {
            description:
              "Recorded (or already recorded); `lease_conflict` is set when the task was not moved because your lease was taken over.",
            headers: etagHeader,
            content: jsonContent(ref("OutcomeResult")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
  };
}
