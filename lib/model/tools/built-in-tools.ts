import type { ToolDefinition } from "@/lib/model/tools/tool-definition";
import type { ToolDataClasses } from "@/lib/model/data-classes";

/**
 * The two tools Verity ships, as the first registered ones (version 1,
 * registered at every start, idempotently: lib/use-cases/tools/register-built-in-tools.ts).
 * Their request schemas are the JSON Schema of the zod schemas in
 * lib/model/executions/tools.ts, which the built-in connectors still parse
 * with (that file takes the rest of its facts from here); their
 * reconciliation is Verity's own connectors (lib/connectors/effects.ts).
 */
export type BuiltInToolName = "payments.refund" | "crm.add_note";
export const BUILT_IN_TOOL_VERSION = 1;

const DAY_SECONDS = 24 * 60 * 60;

export const builtInToolDefinitions: Record<BuiltInToolName, ToolDefinition> = {
  "payments.refund": {
    name: "payments.refund",
    version: BUILT_IN_TOOL_VERSION,
    description: "Refund a charge (money leaves: irreversible)",
    irreversible: true,
    request_schema: {
      type: "object",
      additionalProperties: false,
      required: ["amount_cents", "currency", "charge_id", "customer_id"],
      properties: {
        amount_cents: { type: "integer", minimum: 1, maximum: 100_000_000 },
        currency: { type: "string", pattern: "^[a-z]{3}$" },
        charge_id: { type: "string", minLength: 1, maxLength: 128 },
        customer_id: { type: "string", minLength: 1, maxLength: 128 },
      },
    },
    topic: "refund",
    // Stripe's; the sandbox keeps keys for its lifetime, so this is the binding limit.
    idempotency_window_seconds: DAY_SECONDS,
    amount: { amount_pointer: "/amount_cents", currency_pointer: "/currency" },
    identity_fields: ["/amount_cents", "/currency", "/charge_id", "/customer_id"],
    // Two, so a lone refusal is retried once and a refusal that persists is
    // seen by someone rather than retried forever.
    max_attempts: 2,
    reconciliation: { method: "connector" },
  },
  "crm.add_note": {
    name: "crm.add_note",
    version: BUILT_IN_TOOL_VERSION,
    description: "Add a note to a customer in the CRM",
    irreversible: false,
    request_schema: {
      type: "object",
      additionalProperties: false,
      required: ["customer_id", "text"],
      properties: {
        customer_id: { type: "string", minLength: 1, maxLength: 128 },
        text: { type: "string", minLength: 1, maxLength: 2000 },
      },
    },
    topic: "customer_note",
    idempotency_window_seconds: DAY_SECONDS,
    identity_fields: ["/customer_id", "/text"],
    max_attempts: 2,
    reconciliation: { method: "connector" },
  },
};

export function isBuiltInTool(name: string): name is BuiltInToolName {
  return Object.hasOwn(builtInToolDefinitions, name);
}

/** The built-in definition of an execution's tool, when it is one (recorded before the registry, tool_version null, or version 1). */
export function builtInDefinitionOf(name: string, version: number | null): ToolDefinition | null {
  if (!isBuiltInTool(name)) return null;
  return version === null || version === BUILT_IN_TOOL_VERSION ? builtInToolDefinitions[name] : null;
}

/**
 * The classes of the built-ins' fields, kept beside their definitions and
 * not in them: a member added to version 1 would change its digest, and the
 * registry refuses a registered version with other content
 * (lib/stores/tool-registry.ts), so every database started before would
 * stop at its next start. Classes decide who sees a value, not how a call
 * is judged, so version 1 keeps its rules and takes these, the way shipped
 * workflows take their newest gate rules (gateRulesOf). A registered tool
 * declares its own `data_classes` in its definition.
 */
export const builtInToolDataClasses: Record<BuiltInToolName, ToolDataClasses> = {
  "payments.refund": {
    request: {
      // Four eyes, the task's budget and every reviewer need the amount; it says nothing about whose money it is.
      "/amount_cents": "internal",
      "/currency": "internal",
      // Names one payment at the provider: enough, with the provider's keys, to find the customer.
      "/charge_id": "confidential",
      // Who the money goes back to: personal data. Masked for everyone without clearance.
      "/customer_id": "restricted",
    },
    result: {
      "/amount_cents": "internal",
      "/currency": "internal",
      "/idempotency_key": "internal",
      "/created_at": "internal",
      "/id": "confidential",
      "/charge_id": "confidential",
      "/customer_id": "restricted",
    },
    evidence: {
      // The provider's proof names its own request ids and statuses: how the outcome was established.
      "/customer_id": "restricted",
      "/record/customer_id": "restricted",
    },
  },
  "crm.add_note": {
    request: {
      "/customer_id": "restricted",
      // Free text a person or an agent wrote about a customer: confidential, as every free text.
      "/text": "confidential",
    },
    result: {
      "/idempotency_key": "internal",
      "/created_at": "internal",
      "/id": "confidential",
      "/text": "confidential",
      "/customer_id": "restricted",
    },
    evidence: { "/customer_id": "restricted", "/record/customer_id": "restricted" },
  },
};

/** The classes a tool version declares: its own, or for a built-in version 1 (which predates them) the shipped ones. */
export function dataClassesOfTool(def: ToolDefinition): ToolDataClasses {
  if (def.data_classes) return def.data_classes;
  return isBuiltInTool(def.name) && def.version === BUILT_IN_TOOL_VERSION ? builtInToolDataClasses[def.name] : {};
}
