/** The alerts part of the OpenAPI document: list, read, acknowledge, escalate, reconcile, resolve. */
import {
  ifMatchParam,
  jsonContent,
  type JsonSchema,
  optionalInBody,
  problems,
  queryParameters,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import { AlertActionInputSchema, AlertReconcileInputSchema } from "@/lib/use-cases/alerts/alert-actions";
import {
  AlertDetailSchema,
  AlertPageSchema,
  AlertReconcileResultSchema,
  AlertResourceSchema,
  EscalationResultSchema,
} from "@/lib/adapters/api/alert-resources";
import { ListAlertsQuerySchema } from "@/lib/use-cases/alerts/alert-queries";

export const alertReaders =
  "Bearer token, or the console session (people); permission alerts:read (operators, auditors, engineers, admins).";
export const alertActors =
  "Bearer token, or the console session (people); permission alerts:act (operators, engineers, admins).";
const alertId = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "Alert id." };

export const alertRequestSchemas: SchemaEntries = [
  ["AlertActionRequest", AlertActionInputSchema],
  ["AlertReconcileRequest", AlertReconcileInputSchema],
];

export const alertResponseSchemas: SchemaEntries = [
  ["Alert", AlertResourceSchema],
  ["AlertPage", AlertPageSchema],
  ["AlertDetail", AlertDetailSchema],
  ["AlertEscalation", EscalationResultSchema],
  ["AlertReconciliation", AlertReconcileResultSchema],
];

export function alertFieldsOptionalInBody(requestSchemas: Record<string, JsonSchema>): void {
  for (const name of ["AlertActionRequest", "AlertReconcileRequest"])
    optionalInBody(
      requestSchemas[name],
      "expected_version",
      "The alert version you read. Required here unless sent as If-Match; if both are sent they must agree.",
    );
}

export function alertPaths(): Record<string, JsonSchema> {
  return {
    "/api/v1/alerts": {
      get: {
        tags: ["alerts"],
        operationId: "listAlerts",
        summary: "Alerts newest first, filtered, keyset-paged",
        description: `${alertReaders} Filter by status, severity, kind and task; pass next_cursor back as cursor. \`blocking\` is true while the alert stops irreversible intents on its task (docs/alerts.md).`,
        parameters: queryParameters(ListAlertsQuerySchema),
        responses: {
          200: { description: "One page.", content: jsonContent(ref("AlertPage")) },
          ...problems(400, 401, 403),
        },
      },
    },
    "/api/v1/alerts/{id}": {
      get: {
        tags: ["alerts"],
        operationId: "getAlert",
        summary: "One alert: its evidence (internal vs external) and its history",
        description: `${alertReaders} ETag is the alert's version: send it back as If-Match (or expected_version) with an action.`,
        parameters: [alertId],
        responses: {
          200: {
            description: "The alert.",
            headers: { ETag: { schema: { type: "string" } } },
            content: jsonContent(ref("AlertDetail")),
          },
          ...problems(401, 403, 404),
        },
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
        responses: {
          200: { description: "The alert after.", content: jsonContent(ref("Alert")) },
          ...problems(400, 401, 403, 404, 409, 413, 415),
        },
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
        responses: {
          200: {
            description: "The alert after, and what happened to the task.",
            content: jsonContent(ref("AlertEscalation")),
          },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
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
        responses: {
          200: { description: "The finding.", content: jsonContent(ref("AlertReconciliation")) },
          ...problems(400, 401, 403, 404, 409, 413, 415, 422),
        },
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
        responses: {
          200: { description: "The alert after.", content: jsonContent(ref("Alert")) },
          ...problems(400, 401, 403, 404, 409, 413, 415),
        },
      },
    },
  };
}
