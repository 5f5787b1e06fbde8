import { z } from "zod";
import { LeaseReleaseRequestSchema, LeaseRenewRequestSchema, TransitionLogQuerySchema } from "@/lib/adapters/api/context";
import { EventReceiptSchema } from "@/lib/adapters/api/event-resources";
import { LeaseResourceSchema, LeaseStateSchema } from "@/lib/adapters/api/lease-resources";
import { ExecutionDetailSchema, ExecutionEventResourceSchema, ExecutionListSchema, ExecutionResourceSchema, IntentResultSchema, OutcomeResultSchema } from "@/lib/adapters/api/execution-resources";
import { WorkflowListSchema, WorkflowResourceSchema } from "@/lib/adapters/api/workflow-resources";
import { NextStepsSchema, TaskPageSchema, TaskResourceSchema, TransitionPageSchema, TransitionResourceSchema, TransitionResultSchema } from "@/lib/adapters/api/task-resources";
import { FieldErrorSchema, InvariantViolationSchema, ProblemSchema } from "@/lib/adapters/api/shared-resources";
import {
  CheckpointDetailSchema,
  CheckpointListSchema,
  CheckpointRestoreListSchema,
  CheckpointSummarySchema,
  RestorePlanSchema,
  RestoreResultSchema,
} from "@/lib/adapters/api/checkpoint-resources";
import {
  AuditEntriesQuerySchema,
  AuditEntryResourceSchema,
  AuditVerificationResourceSchema,
  ExportVerificationResourceSchema,
  ExportVerifyQuerySchema,
} from "@/lib/adapters/api/audit-resources";
import { AuditSearchExportQuerySchema, AuditSearchPageSchema, AuditSearchQuerySchema } from "@/lib/adapters/api/audit-search-resources";
import {
  AlertDetailSchema,
  AlertPageSchema,
  AlertReconcileResultSchema,
  AlertResourceSchema,
  EscalationResultSchema,
  MonitorPassResultSchema,
  MonitorRunListSchema,
} from "@/lib/adapters/api/alert-resources";
import { AlertActionInputSchema, AlertReconcileInputSchema } from "@/lib/use-cases/alerts/alert-actions";
import { ListAlertsQuerySchema } from "@/lib/use-cases/alerts/alert-queries";
import { MonitorRunInputSchema } from "@/lib/use-cases/monitor/monitor-runs";
import { RestoreInputSchema } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { RestorePlanInputSchema } from "@/lib/use-cases/checkpoints/plan-restore";
import { CreateCheckpointInputSchema } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { MarkSentInputSchema, RecordIntentInputSchema, RecordOutcomeInputSchema } from "@/lib/use-cases/executions/executions";
import { RecordInstructionInputSchema } from "@/lib/stores/instructions";
import { InstructionLedgerSchema, InstructionResourceSchema, RecordInstructionResultSchema } from "@/lib/adapters/api/instruction-resources";
import { LeaseRequestSchema } from "@/lib/stores/leases";
import { InboundEventSchema } from "@/lib/stores/messaging";
import { webhookEventSchema } from "@/lib/connectors/sandbox/contract";
import { CreateTaskInputSchema, ListTasksQuerySchema } from "@/lib/use-cases/tasks/tasks";
import { TransitionInputSchema } from "@/lib/stores/tasks/task-transitions";
import { TaskPatchSchema, TaskStateSchema } from "@/lib/model/tasks/task-state";
import { workflowNames } from "@/lib/model/workflows";

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
  401: "Missing, malformed, unknown or revoked bearer token (or, on a provider webhook, a missing or wrong signature).",
  403: "The token's role lacks the permission, or the actor may not take this edge.",
  404: "No such task, execution or workflow.",
  409: "Version conflict (`current_version`), lease conflict (another holder, or a stale fencing token: nothing was written; an outcome report is the exception, see recordOutcome), or an id reused for a different request.",
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
const ifMatchParam = { name: "If-Match", in: "header", required: false, schema: { type: "string", example: '"5"' } };
const fencingTokenParam = {
  name: "Fencing-Token",
  in: "header",
  required: false,
  description: "Your lease's fencing token; or fencing_token in the body. If both are sent they must agree.",
  schema: { type: "string", pattern: "^[0-9]{1,18}$", example: "3" },
};
const fencingTokenHeader = { "Fencing-Token": { description: "The lease's fencing token: send it with every write.", schema: { type: "string" } } };

/** A request schema whose field may come from a header instead: no longer required in the body, and said so. */
function optionalInBody(schema: JsonSchema | undefined, field: string, description: string): void {
  const s = schema as { required?: string[]; properties?: Record<string, JsonSchema> } | undefined;
  if (s?.required) {
    const required = s.required.filter((f) => f !== field);
    if (required.length > 0) s.required = required;
    else delete s.required;
  }
  if (s?.properties?.[field]) s.properties[field].description = description;
}

function buildDocument(): JsonSchema {
  const requestSchemas = componentSchemas(
    [
      ["CreateTaskRequest", CreateTaskInputSchema],
      ["TransitionRequest", TransitionInputSchema],
      ["TaskPatch", TaskPatchSchema],
      ["RecordIntentRequest", RecordIntentInputSchema],
      ["MarkSentRequest", MarkSentInputSchema],
      ["RecordOutcomeRequest", RecordOutcomeInputSchema],
      ["LeaseRequest", LeaseRequestSchema],
      ["LeaseRenewRequest", LeaseRenewRequestSchema],
      ["LeaseReleaseRequest", LeaseReleaseRequestSchema],
      ["InboundEvent", InboundEventSchema],
      ["SandboxWebhookEvent", webhookEventSchema],
      ["CreateCheckpointRequest", CreateCheckpointInputSchema],
      ["RestorePlanRequest", RestorePlanInputSchema],
      ["RestoreRequest", RestoreInputSchema],
      ["RecordInstructionRequest", RecordInstructionInputSchema],
      ["AlertActionRequest", AlertActionInputSchema],
      ["AlertReconcileRequest", AlertReconcileInputSchema],
      ["MonitorRunRequest", MonitorRunInputSchema],
    ],
    "input",
  );
  optionalInBody(requestSchemas.RecordInstructionRequest, "expected_seq", "The ledger seq you read (0 for an empty ledger). Required here unless sent as If-Match; if both are sent they must agree.");
  // expected_version may come from If-Match and fencing_token from Fencing-Token; the API fills them in before validating.
  const versionDescription = "The version the change is based on. Required here unless sent as If-Match; if both are sent they must agree.";
  const tokenDescription = "Your lease's fencing token; or send it as Fencing-Token. If both are sent they must agree. A stale token is a 409 lease-conflict and nothing is written.";
  for (const name of ["AlertActionRequest", "AlertReconcileRequest"]) optionalInBody(requestSchemas[name], "expected_version", "The alert version you read. Required here unless sent as If-Match; if both are sent they must agree.");
  for (const name of ["TransitionRequest", "RecordIntentRequest", "RestoreRequest"]) {
    optionalInBody(requestSchemas[name], "expected_version", versionDescription);
    optionalInBody(requestSchemas[name], "fencing_token", tokenDescription);
  }
  for (const name of ["LeaseRenewRequest", "LeaseReleaseRequest"]) optionalInBody(requestSchemas[name], "fencing_token", tokenDescription);
  optionalInBody(
    requestSchemas.RecordOutcomeRequest,
    "fencing_token",
    "Your lease's fencing token; or send it as Fencing-Token. If both are sent they must agree. A stale token still records the outcome but does not move the task: see lease_conflict in the response.",
  );
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
      ["Execution", ExecutionResourceSchema],
      ["ExecutionEvent", ExecutionEventResourceSchema],
      ["ExecutionDetail", ExecutionDetailSchema],
      ["ExecutionList", ExecutionListSchema],
      ["IntentResult", IntentResultSchema],
      ["OutcomeResult", OutcomeResultSchema],
      ["Lease", LeaseResourceSchema],
      ["LeaseState", LeaseStateSchema],
      ["EventReceipt", EventReceiptSchema],
      ["Checkpoint", CheckpointSummarySchema],
      ["CheckpointList", CheckpointListSchema],
      ["CheckpointDetail", CheckpointDetailSchema],
      ["RestorePlan", RestorePlanSchema],
      ["RestoreResult", RestoreResultSchema],
      ["CheckpointRestoreList", CheckpointRestoreListSchema],
      ["AuditEntry", AuditEntryResourceSchema],
      ["AuditEntryPage", z.object({ items: z.array(AuditEntryResourceSchema), next_cursor: z.string().nullable() })],
      ["AuditVerification", AuditVerificationResourceSchema],
      ["AuditSearchPage", AuditSearchPageSchema],
      ["AuditExportVerification", ExportVerificationResourceSchema],
      ["Instruction", InstructionResourceSchema],
      ["InstructionLedger", InstructionLedgerSchema],
      ["RecordInstructionResult", RecordInstructionResultSchema],
      ["Alert", AlertResourceSchema],
      ["AlertPage", AlertPageSchema],
      ["AlertDetail", AlertDetailSchema],
      ["AlertEscalation", EscalationResultSchema],
      ["AlertReconciliation", AlertReconcileResultSchema],
      ["MonitorRunList", MonitorRunListSchema],
      ["MonitorPassResult", MonitorPassResultSchema],
    ],
    "output",
  );
  const alertReaders = "Bearer token, or the console session (people); permission alerts:read (operators, auditors, engineers, admins).";
  const alertActors = "Bearer token, or the console session (people); permission alerts:act (operators, engineers, admins).";
  const alertId = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Alert id." };
  const auditReaders = "Bearer token, or the console session (people); permission audit:read (auditors, engineers, admins).";
  const checkpointId = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Checkpoint id." };
  const checkpointReaders = "Bearer token, or the console session (people): every role may read checkpoints.";
  const executionId = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Execution id." };

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
    tags: [{ name: "tasks" }, { name: "executions" }, { name: "leases" }, { name: "events" }, { name: "checkpoints" }, { name: "audit" }, { name: "instructions" }, { name: "alerts" }, { name: "workflows" }, { name: "meta" }],
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
          parameters: [taskId, ifMatchParam, fencingTokenParam],
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
      "/api/v1/tasks/{id}/executions": {
        post: {
          tags: ["executions"],
          operationId: "recordIntent",
          summary: "Record the intent to call a tool, before calling it",
          description:
            "Write-ahead: the intent and the task's move to WAITING_FOR_TOOL commit together under compare-and-swap, before anything leaves. " +
            "`proceed`: call the tool with execution.idempotency_key, after POST …/sent. `receipt`: this tool_call_id already succeeded; do not call again. " +
            "A retry of an intent never sent answers `proceed` with the same attempt (200). After a known failure the same tool_call_id starts a new attempt " +
            "with the same key (201): make it when the failed execution's `retry.safe` is true (the provider said nothing was applied, or the reconciler " +
            "established it never was, and the tool's attempt limit is not reached); after an unknown outcome it is refused " +
            "(422 unknown_outcome_reconciled_before_retry) until the server has reconciled it.",
          parameters: [taskId, ifMatchParam, fencingTokenParam],
          requestBody: { required: true, content: jsonContent(ref("RecordIntentRequest")) },
          responses: {
            201: { description: "Intent recorded: proceed.", headers: etagHeader, content: jsonContent(ref("IntentResult")) },
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
          responses: { 200: { description: "Every tool call of the task.", content: jsonContent(ref("ExecutionList")) }, ...problems(401, 403, 404) },
        },
      },
      "/api/v1/tasks/{id}/instructions": {
        get: {
          tags: ["instructions"],
          operationId: "listInstructions",
          summary: "The task's instruction ledger, newest first, with each entry's standing and the current instruction per topic",
          description: "Bearer token, or the console session; permission instructions:read. ETag is the ledger's seq.",
          parameters: [taskId],
          responses: { 200: { description: "The ledger.", headers: etagHeader, content: jsonContent(ref("InstructionLedger")) }, ...problems(401, 403, 404) },
        },
        post: {
          tags: ["instructions"],
          operationId: "recordInstruction",
          summary: "Append an instruction to the task's ledger (compare-and-swap on its seq)",
          description:
            "Permission instructions:write (operators, admins, agents). A person's instruction is authorized; an agent's is authorized only when it relays the " +
            "requester's words (source user); its own memory (source agent_memory, the default for agents) is recorded but never authorized and never supersedes. " +
            "The latest authorized allow/forbid on a topic supersedes the older ones. A stale seq is a 409 naming the current seq; a retried instruction_id replays (200).",
          parameters: [taskId, { name: "If-Match", in: "header", required: false, schema: { type: "string" }, description: 'The ledger seq you read, e.g. "3" ("0" when empty).' }],
          requestBody: { required: true, content: jsonContent(ref("RecordInstructionRequest")) },
          responses: {
            201: { description: "Recorded.", headers: etagHeader, content: jsonContent(ref("RecordInstructionResult")) },
            200: { description: "A retry of a recorded instruction_id: nothing written.", headers: etagHeader, content: jsonContent(ref("RecordInstructionResult")) },
            ...problems(400, 401, 403, 404, 409, 413, 415),
          },
        },
      },
      "/api/v1/executions/{id}": {
        get: {
          tags: ["executions"],
          operationId: "getExecution",
          summary: "One execution with its events",
          parameters: [executionId],
          responses: { 200: { description: "The execution.", content: jsonContent(ref("ExecutionDetail")) }, ...problems(401, 403, 404) },
        },
      },
      "/api/v1/executions/{id}/sent": {
        post: {
          tags: ["executions"],
          operationId: "markSent",
          summary: "The request is about to leave",
          description: "From here until an outcome is recorded, the effect may or may not exist; a worker that dies now leaves a SENT execution the server reconciles. Idempotent for the lease that sent it. " +
            "Only the task's current lease may send: send your fencing_token (without one, the lease the attempt was recorded under is assumed); a fenced worker gets 409 lease-conflict and must not send.",
          parameters: [executionId],
          requestBody: { required: true, content: jsonContent(ref("MarkSentRequest")) },
          responses: { 200: { description: "SENT.", content: jsonContent(ref("Execution")) }, ...problems(400, 401, 403, 404, 409, 413, 415, 422) },
        },
      },
      "/api/v1/executions/{id}/outcome": {
        post: {
          tags: ["executions"],
          operationId: "recordOutcome",
          summary: "Record what the tool call did: succeeded, failed or unknown",
          description:
            "succeeded needs evidence naming this execution (its id, e.g. in metadata.execution_id, or its idempotency key), else 422 success_requires_matching_evidence. " +
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
              description: "Recorded (or already recorded); `lease_conflict` is set when the task was not moved because your lease was taken over.",
              headers: etagHeader,
              content: jsonContent(ref("OutcomeResult")),
            },
            ...problems(400, 401, 403, 404, 409, 413, 415, 422),
          },
        },
      },
      "/api/v1/tasks/{id}/lease": {
        post: {
          tags: ["leases"],
          operationId: "acquireLease",
          summary: "Take the task's lease",
          description:
            "Free or expired: yours, with a new lease id and a new, greater fencing token. A lease belongs to one worker process, not to an identity: " +
            "while a lease is live, every other acquire is 409 lease-conflict naming the holder, token and expiry, another process of the same identity included. " +
            "Send your own lease_id to make the acquire retry-safe: the same lease_id (and holder) gets the same live lease back, renewed. " +
            "The body may be omitted (ttl_seconds defaults to 60).",
          parameters: [taskId],
          requestBody: { required: false, content: jsonContent(ref("LeaseRequest")) },
          responses: { 200: { description: "The lease.", headers: fencingTokenHeader, content: jsonContent(ref("Lease")) }, ...problems(400, 401, 403, 404, 409, 413, 415) },
        },
        get: {
          tags: ["leases"],
          operationId: "getLease",
          summary: "The task's latest lease, live or expired",
          parameters: [taskId],
          responses: { 200: { description: "The lease, or null.", content: jsonContent(ref("LeaseState")) }, ...problems(401, 403, 404) },
        },
      },
      "/api/v1/tasks/{id}/lease/renew": {
        post: {
          tags: ["leases"],
          operationId: "renewLease",
          summary: "Extend your live lease",
          description: "409 lease-conflict when the token is no longer your live lease: stop writing, and acquire again.",
          parameters: [taskId, fencingTokenParam],
          requestBody: { required: false, content: jsonContent(ref("LeaseRenewRequest")) },
          responses: { 200: { description: "The renewed lease.", headers: fencingTokenHeader, content: jsonContent(ref("Lease")) }, ...problems(400, 401, 403, 409, 413, 415) },
        },
      },
      "/api/v1/tasks/{id}/lease/release": {
        post: {
          tags: ["leases"],
          operationId: "releaseLease",
          summary: "End your lease now",
          description: "204 whether or not the token was still current: a lease no longer yours is released already, and a retried release must not fail.",
          parameters: [taskId, fencingTokenParam],
          requestBody: { required: false, content: jsonContent(ref("LeaseReleaseRequest")) },
          responses: { 204: { description: "Released (or no longer yours)." }, ...problems(400, 401, 403, 404, 413, 415) },
        },
      },
      "/api/v1/events": {
        post: {
          tags: ["events"],
          operationId: "postEvent",
          summary: "An inbound event, received once per event_id",
          description:
            "A redelivery of the same event_id is answered with the first receipt (200, duplicate: true, Idempotent-Replayed) and changes nothing; " +
            "the same id with another source or type is a 409. Events posted here are recorded, never applied as a provider's evidence: " +
            "signed provider webhooks have their own endpoint.",
          requestBody: { required: true, content: jsonContent(ref("InboundEvent")) },
          responses: {
            201: { description: "Received.", content: jsonContent(ref("EventReceipt")) },
            200: { description: "Received before: the first receipt.", headers: { "Idempotent-Replayed": { schema: { type: "string", const: "true" } } }, content: jsonContent(ref("EventReceipt")) },
            ...problems(400, 401, 403, 409, 413, 415),
          },
        },
      },
      "/api/v1/events/sandbox": {
        post: {
          tags: ["events"],
          operationId: "receiveSandboxWebhook",
          summary: "The sandbox provider's signed webhooks",
          description:
            "Authenticated by Sandbox-Signature (t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\"> with the shared secret, at most 300 s old), not by a bearer token. " +
            "A refund.succeeded event is evidence like a provider lookup: it settles a SENT or unknown execution, and raises a divergence against a recorded failure. " +
            "Applied once per event id; a redelivery gets the first result.",
          security: [],
          parameters: [{ name: "Sandbox-Signature", in: "header", required: true, schema: { type: "string", example: "t=1764460800,v1=5f…" } }],
          requestBody: { required: true, content: jsonContent(ref("SandboxWebhookEvent")) },
          responses: { 200: { description: "Applied, or received before.", content: jsonContent(ref("EventReceipt")) }, ...problems(400, 401, 409, 413, 415) },
        },
      },
      "/api/v1/tasks/{id}/checkpoints": {
        get: {
          tags: ["checkpoints"],
          operationId: "listCheckpoints",
          summary: "The task's checkpoints, oldest first, each verified",
          description: checkpointReaders,
          parameters: [taskId],
          responses: { 200: { description: "Checkpoints with their integrity reports.", content: jsonContent(ref("CheckpointList")) }, ...problems(401, 403, 404) },
        },
        post: {
          tags: ["checkpoints"],
          operationId: "createCheckpoint",
          summary: "Checkpoint the task's current committed state",
          description:
            "Agents, engineers and admins. If-Match (or expected_version) pins the version you mean: a task that moved on is a 409. " +
            "A retried checkpoint_id returns the first checkpoint (200, Idempotent-Replayed). A state that is not valid TaskState is refused (422 checkpoint_of_valid_state).",
          parameters: [taskId, ifMatchParam],
          requestBody: { required: false, content: jsonContent(ref("CreateCheckpointRequest")) },
          responses: {
            201: { description: "Taken.", headers: { Location: { schema: { type: "string" } } }, content: jsonContent(ref("Checkpoint")) },
            200: { description: "Taken before under this checkpoint_id.", headers: { "Idempotent-Replayed": { schema: { type: "string", const: "true" } } }, content: jsonContent(ref("Checkpoint")) },
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
          responses: { 200: { description: "Restore records with their plans.", content: jsonContent(ref("CheckpointRestoreList")) }, ...problems(401, 403, 404) },
        },
      },
      "/api/v1/checkpoints/{id}": {
        get: {
          tags: ["checkpoints"],
          operationId: "getCheckpoint",
          summary: "One checkpoint: document, integrity report, diff to the task now",
          description: `${checkpointReaders} Each check (payload, canonical form, schema, snapshot digest, signature, columns, snapshot validity, workflow compatibility) is reported with a message.`,
          parameters: [checkpointId],
          responses: { 200: { description: "The checkpoint.", content: jsonContent(ref("CheckpointDetail")) }, ...problems(401, 403, 404) },
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
          responses: { 200: { description: "The plan.", content: jsonContent(ref("RestorePlan")) }, ...problems(400, 401, 403, 404, 413, 415) },
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
              headers: { ...etagHeader, "Idempotent-Replayed": { description: "Present when the restore_id was already applied.", schema: { type: "string", const: "true" } } },
              content: jsonContent(ref("RestoreResult")),
            },
            ...problems(400, 401, 403, 404, 409, 413, 415, 422),
          },
        },
      },
      "/api/v1/audit/entries": {
        get: {
          tags: ["audit"],
          operationId: "listAuditEntries",
          summary: "Audit entries of a range, oldest first, keyset-paged",
          description: `${auditReaders} Filter by from (inclusive), to (exclusive), task, actor, action; pass next_cursor back as cursor. Each entry carries every field its hash covers.`,
          parameters: queryParameters(AuditEntriesQuerySchema),
          responses: { 200: { description: "One page.", content: jsonContent(ref("AuditEntryPage")) }, ...problems(400, 401, 403) },
        },
      },
      "/api/v1/audit/search": {
        get: {
          tags: ["audit"],
          operationId: "searchAuditEntries",
          summary: "Search the log across tasks, keyset-paged either way",
          description:
            `${auditReaders} Filters combine with AND: from (inclusive), to (exclusive), task, actor, action, kind, status (a move to or from it), ` +
            "and tool / idempotency_key / execution, resolved through the executions table to the entries about those executions " +
            "(their own chain, and reviews and alerts naming them), or with scope=task to every entry of their tasks. Pass next_cursor back as cursor, with the same order.",
          parameters: queryParameters(AuditSearchQuerySchema),
          responses: { 200: { description: "One page.", content: jsonContent(ref("AuditSearchPage")) }, ...problems(400, 401, 403) },
        },
      },
      "/api/v1/audit/export": {
        get: {
          tags: ["audit"],
          operationId: "exportAudit",
          summary: "A range of the log as JSON Lines or CSV, streamed; the export itself is recorded",
          description:
            "Permission audit:export. Every line has seq, prev_hash and hash: verify the file with POST /api/v1/audit/verify or offline (docs/audit.md). " +
            "An error after the first byte ends the transfer with an error, never a short file that looks whole.",
          parameters: queryParameters(AuditSearchExportQuerySchema),
          responses: {
            200: {
              description: "The entries, one per line (CSV: with a header row).",
              headers: { "Content-Disposition": { schema: { type: "string" } } },
              content: { "application/x-ndjson": { schema: { type: "string" } }, "text/csv": { schema: { type: "string" } } },
            },
            ...problems(400, 401, 403),
          },
        },
      },
      "/api/v1/audit/verify": {
        get: {
          tags: ["audit"],
          operationId: "verifyAuditLog",
          summary: "Walk every chain in the database now",
          description: `${auditReaders} 200 either way: ok and first_break are the answer.`,
          responses: { 200: { description: "The verification.", content: jsonContent(ref("AuditVerification")) }, ...problems(401, 403) },
        },
        post: {
          tags: ["audit"],
          operationId: "verifyAuditExport",
          summary: "Verify an export sent back as the body (up to 10 MiB)",
          description: `${auditReaders} Every line's hash and every link between consecutive entries of a stream, with the line of each problem. contiguous=true when the export was not filtered by actor or action: a gap is then a deleted line.`,
          parameters: queryParameters(ExportVerifyQuerySchema),
          requestBody: { required: true, content: { "application/x-ndjson": { schema: { type: "string" } }, "text/csv": { schema: { type: "string" } } } },
          responses: { 200: { description: "The verification.", content: jsonContent(ref("AuditExportVerification")) }, ...problems(400, 401, 403, 413, 415) },
        },
      },
      "/api/v1/alerts": {
        get: {
          tags: ["alerts"],
          operationId: "listAlerts",
          summary: "Alerts newest first, filtered, keyset-paged",
          description: `${alertReaders} Filter by status, severity, kind and task; pass next_cursor back as cursor. \`blocking\` is true while the alert stops irreversible intents on its task (docs/alerts.md).`,
          parameters: queryParameters(ListAlertsQuerySchema),
          responses: { 200: { description: "One page.", content: jsonContent(ref("AlertPage")) }, ...problems(400, 401, 403) },
        },
      },
      "/api/v1/alerts/{id}": {
        get: {
          tags: ["alerts"],
          operationId: "getAlert",
          summary: "One alert: its evidence (internal vs external) and its history",
          description: `${alertReaders} ETag is the alert's version: send it back as If-Match (or expected_version) with an action.`,
          parameters: [alertId],
          responses: { 200: { description: "The alert.", headers: { ETag: { schema: { type: "string" } } }, content: jsonContent(ref("AlertDetail")) }, ...problems(401, 403, 404) },
        },
      },
      "/api/v1/alerts/{id}/acknowledge": {
        post: {
          tags: ["alerts"],
          operationId: "acknowledgeAlert",
          summary: "Acknowledge with a reason (OPEN or ESCALATED → ACKNOWLEDGED; no longer blocks)",
          description: `${alertActors} A CAS on the alert's version with its audit entry: 409 version-conflict, in words, when it changed since you read it.`,
          parameters: [alertId, ifMatchParam],
          requestBody: { required: true, content: jsonContent(ref("AlertActionRequest")) },
          responses: { 200: { description: "The alert after.", content: jsonContent(ref("Alert")) }, ...problems(400, 401, 403, 404, 409, 413, 415) },
        },
      },
      "/api/v1/alerts/{id}/escalate": {
        post: {
          tags: ["alerts"],
          operationId: "escalateAlert",
          summary: "Escalate with a reason (→ ESCALATED); the task to WAITING_FOR_HUMAN where its workflow allows",
          description: `${alertActors} One transaction: the alert's CAS, the task's move (or \`task.note\` saying why it stays), the audit entry.`,
          parameters: [alertId, ifMatchParam],
          requestBody: { required: true, content: jsonContent(ref("AlertActionRequest")) },
          responses: { 200: { description: "The alert after, and what happened to the task.", content: jsonContent(ref("AlertEscalation")) }, ...problems(400, 401, 403, 404, 409, 413, 415, 422) },
        },
      },
      "/api/v1/alerts/{id}/reconcile": {
        post: {
          tags: ["alerts"],
          operationId: "reconcileAlert",
          summary: "Reconcile the alert's execution with its provider now; RESOLVED if they agree",
          description: `${alertActors} 422 reconcile_needs_execution for an alert without one. agreed=false: the attempt is recorded (a new version) and the alert stays open.`,
          parameters: [alertId, ifMatchParam],
          requestBody: { required: false, content: jsonContent(ref("AlertReconcileRequest")) },
          responses: { 200: { description: "The finding.", content: jsonContent(ref("AlertReconciliation")) }, ...problems(400, 401, 403, 404, 409, 413, 415, 422) },
        },
      },
      "/api/v1/alerts/{id}/resolve": {
        post: {
          tags: ["alerts"],
          operationId: "resolveAlert",
          summary: "Resolve with the correction made (→ RESOLVED)",
          description: `${alertActors} CAS on the alert's version, audited.`,
          parameters: [alertId, ifMatchParam],
          requestBody: { required: true, content: jsonContent(ref("AlertActionRequest")) },
          responses: { 200: { description: "The alert after.", content: jsonContent(ref("Alert")) }, ...problems(400, 401, 403, 404, 409, 413, 415) },
        },
      },
      "/api/v1/monitor/runs": {
        get: {
          tags: ["alerts"],
          operationId: "listMonitorRuns",
          summary: "The invariant monitor's last passes",
          description: alertReaders,
          responses: { 200: { description: "Newest first.", content: jsonContent(ref("MonitorRunList")) }, ...problems(401, 403) },
        },
        post: {
          tags: ["alerts"],
          operationId: "runMonitorPass",
          summary: "Run one invariant-monitor pass now",
          description: `${alertActors} 201 with the run; 200 with skipped=true when another pass is in progress.`,
          requestBody: { required: false, content: jsonContent(ref("MonitorRunRequest")) },
          responses: {
            200: { description: "Skipped: another pass is running.", content: jsonContent(ref("MonitorPassResult")) },
            201: { description: "The pass.", content: jsonContent(ref("MonitorPassResult")) },
            ...problems(400, 401, 403, 413, 415),
          },
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
