import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { stripePaymentConnectorFromSettings } from "@/lib/connectors/stripe/payment";
import type {
  CallOptions,
  CrmConnector,
  FailedOutcome,
  Note,
  PaymentConnector,
  ProviderEvidence,
  Refund,
  UnknownOutcome,
} from "@/lib/connectors/types";
import { HttpToolLookupConnector } from "@/lib/connectors/tool-lookup/http-lookup";
import { digestOf } from "@/lib/core/canonical-json";
import { getEnv, getLookupSecret } from "@/lib/config/env";
import { inSpan } from "@/lib/config/tracing";
import type { Execution } from "@/lib/generated/prisma/client";
import { CrmNoteRequestSchema, RefundRequestSchema, type ToolName } from "@/lib/model/executions/tools";
import { isBuiltInTool } from "@/lib/model/tools/built-in-tools";
import { pointerAsField, valueAtPointer } from "@/lib/model/tools/json-pointer";
import { knownToolVersion } from "@/lib/model/tools/known-tool-versions";

/**
 * The external systems the engine itself talks to (the reconciler, the review
 * queue's re-execution), and the one mapping from a tool to its connector
 * calls. Everything else in the engine sees a provider record in the same
 * snake_case shape as the tool's request, so "does the effect match what we
 * asked" is one field-by-field comparison whatever the tool.
 */

export interface ConnectorDeps {
  payments: PaymentConnector;
  crm: CrmConnector;
  /** Registered tools' `http` lookups (lib/connectors/tool-lookup/http-lookup.ts); signed with VERITY_LOOKUP_SECRET when absent. */
  toolLookups?: HttpToolLookupConnector;
}

let cached: ConnectorDeps | undefined;

/**
 * The CRM of the sandbox at the configured URL (VERITY_SANDBOX_URL, or the
 * local sandbox on SANDBOX_PORT), and the payment provider
 * VERITY_PAYMENTS_PROVIDER names: that sandbox (the default) or Stripe at
 * STRIPE_API_BASE with STRIPE_API_KEY.
 */
export function getConnectors(): ConnectorDeps {
  if (cached) return cached;
  const env = getEnv();
  const baseUrl = env.sandboxUrl;
  const payments =
    env.VERITY_PAYMENTS_PROVIDER === "stripe"
      ? stripePaymentConnectorFromSettings(env)
      : new SandboxPaymentConnector({ baseUrl });
  cached = { payments, crm: new SandboxCrmConnector({ baseUrl }) };
  return cached;
}

/**
 * How long the tool's provider remembers an idempotency key (the
 * definition's idempotency_window_seconds: 24 h for the built-ins, Stripe's).
 * Inside the window a retry under the same key is answered with the first
 * result; past it the provider may treat the key as new, so an effect whose
 * outcome is still unknown by then can no longer be retried safely (the
 * invariant monitor raises unknown_outcome_expired). VERITY_IDEMPOTENCY_WINDOW_MS
 * overrides every tool's (tests shorten it); a tool version this process
 * has not read from the tenant's registry gets 24 h.
 */
export function idempotencyWindowMs(tenantId: string, tool: string, version?: number | null): number {
  const override = getEnv().VERITY_IDEMPOTENCY_WINDOW_MS;
  if (override !== undefined) return override;
  return (knownToolVersion(tenantId, tool, version)?.idempotency_window_seconds ?? 24 * 60 * 60) * 1000;
}

/** A provider's record of an effect, in the vocabulary of the tool's request. */
export type ProviderRecord = Record<string, unknown> & {
  id: string;
  idempotency_key: string;
  metadata: Record<string, string>;
};

export type EffectLookup =
  | { kind: "found"; record: ProviderRecord; evidence: ProviderEvidence }
  | { kind: "not_found"; evidence: ProviderEvidence }
  | UnknownOutcome;

export type EffectOutcome =
  { kind: "succeeded"; record: ProviderRecord; evidence: ProviderEvidence } | FailedOutcome | UnknownOutcome;

/** The provider's records in the tool's request vocabulary: what the reconciler and a failover compare. */
export function refundRecord(r: Refund): ProviderRecord {
  return {
    id: r.id,
    amount_cents: r.amountCents,
    currency: r.currency,
    charge_id: r.chargeId,
    customer_id: r.customerId,
    metadata: r.metadata,
    idempotency_key: r.idempotencyKey,
    created_at: r.createdAt,
  };
}

export function noteRecord(n: Note): ProviderRecord {
  return {
    id: n.id,
    customer_id: n.customerId,
    text: n.text,
    metadata: n.metadata,
    idempotency_key: n.idempotencyKey,
    created_at: n.createdAt,
  };
}

export function toolOf(execution: Pick<Execution, "tool">): ToolName {
  switch (execution.tool) {
    case "payments.refund":
    case "crm.add_note":
      return execution.tool;
    default:
      throw new Error(`execution of unknown tool ${execution.tool}`);
  }
}

/**
 * What the provider holds under the execution's idempotency key: the
 * question asked before any correction. The built-in tools ask Verity's
 * connectors; a registered tool reconciled over `http` asks its owner's
 * lookup endpoint. The engine asks through lib/use-cases/tools/look-up-effect.ts,
 * which also answers the `worker` and `manual` methods (they need the database).
 */
export function lookupEffect(execution: Execution, deps: ConnectorDeps, call: CallOptions = {}): Promise<EffectLookup> {
  return inSpan("connector lookup", spanAttributes(execution), async (span) => {
    const found = await lookupAtProvider(execution, deps, call);
    span?.setAttribute("verity.lookup", found.kind);
    return found;
  });
}

/** A connector span's attributes: which call of which tool (lib/config/tracing.ts). */
function spanAttributes(execution: Pick<Execution, "tool" | "id" | "taskId">) {
  return { "verity.tool": execution.tool, "verity.execution_id": execution.id, "verity.task_id": execution.taskId };
}

async function lookupAtProvider(execution: Execution, deps: ConnectorDeps, call: CallOptions): Promise<EffectLookup> {
  if (!isBuiltInTool(execution.tool)) {
    const def = knownToolVersion(execution.tenantId, execution.tool, execution.toolVersion);
    if (def?.reconciliation.method !== "http")
      throw new Error(
        `lookupEffect: ${execution.tool}@${execution.toolVersion ?? "?"} is not looked up over http here`,
      );
    const lookups = deps.toolLookups ?? new HttpToolLookupConnector({ secret: getLookupSecret() });
    return lookups.lookup(
      def.reconciliation.url,
      {
        tool: execution.tool,
        toolVersion: def.version,
        idempotencyKey: execution.idempotencyKey,
        executionId: execution.id,
        taskId: execution.taskId,
        request: execution.request as Record<string, unknown>,
      },
      call,
    );
  }
  const tool = toolOf(execution);
  switch (tool) {
    case "payments.refund": {
      // Stripe has no lookup by key: its connector searches the charge's refunds, and needs to know when the call went out.
      const charge = RefundRequestSchema.safeParse(execution.request);
      const found = await deps.payments.lookupRefund(execution.idempotencyKey, call, {
        chargeId: charge.success ? charge.data.charge_id : undefined,
        sentAt: execution.sentAt,
      });
      return found.kind === "found"
        ? { kind: "found", record: refundRecord(found.refund), evidence: found.evidence }
        : found;
    }
    case "crm.add_note": {
      const found = await deps.crm.lookupNote(execution.idempotencyKey, call);
      return found.kind === "found"
        ? { kind: "found", record: noteRecord(found.note), evidence: found.evidence }
        : found;
    }
  }
}

/** What a call needs of its execution: the row, or the view markSent answers with (no read before the call). */
export type CallOfExecution = Pick<Execution, "id" | "taskId" | "tool" | "idempotencyKey"> & { request: unknown };

/** Sends the execution's request again, under its same idempotency key: the provider applies it at most once. */
export function performEffect(
  execution: CallOfExecution,
  deps: ConnectorDeps,
  call: CallOptions = {},
): Promise<EffectOutcome> {
  return inSpan("connector perform", spanAttributes(execution), async (span) => {
    const outcome = await performAtProvider(execution, deps, call);
    span?.setAttribute("verity.outcome", outcome.kind);
    return outcome;
  });
}

async function performAtProvider(
  execution: CallOfExecution,
  deps: ConnectorDeps,
  call: CallOptions,
): Promise<EffectOutcome> {
  const tool = toolOf(execution);
  const metadata = { executionId: execution.id, taskId: execution.taskId };
  switch (tool) {
    case "payments.refund": {
      const r = RefundRequestSchema.parse(execution.request);
      const outcome = await deps.payments.refund(
        {
          idempotencyKey: execution.idempotencyKey,
          amountCents: r.amount_cents,
          currency: r.currency,
          chargeId: r.charge_id,
          customerId: r.customer_id,
          metadata,
        },
        call,
      );
      return outcome.kind === "succeeded"
        ? { kind: "succeeded", record: refundRecord(outcome.refund), evidence: outcome.evidence }
        : outcome;
    }
    case "crm.add_note": {
      const n = CrmNoteRequestSchema.parse(execution.request);
      const outcome = await deps.crm.addNote(
        { idempotencyKey: execution.idempotencyKey, customerId: n.customer_id, text: n.text, metadata },
        call,
      );
      return outcome.kind === "succeeded"
        ? { kind: "succeeded", record: noteRecord(outcome.note), evidence: outcome.evidence }
        : outcome;
    }
  }
}

/**
 * The fields of the request the provider's record disagrees with. A record
 * under our key that refunds another amount, charge or customer is not our
 * effect, whatever the key says; one that names another execution is not
 * either.
 */
export function recordMismatches(
  execution: Pick<Execution, "tenantId" | "id" | "tool" | "request" | "idempotencyKey"> & {
    toolVersion?: number | null;
  },
  record: ProviderRecord,
): string[] {
  // The tool's identity fields, from the version the call was recorded under.
  const def = knownToolVersion(execution.tenantId, execution.tool, execution.toolVersion);
  if (!def) throw new Error(`execution of unknown tool ${execution.tool}@${execution.toolVersion ?? "?"}`);
  const sameValue = (a: unknown, b: unknown) =>
    a === b || (a !== undefined && b !== undefined && digestOf(a) === digestOf(b));
  const mismatches = def.identity_fields
    .filter((p) => !sameValue(valueAtPointer(record, p), valueAtPointer(execution.request, p)))
    .map(pointerAsField);
  if (record.idempotency_key !== execution.idempotencyKey) mismatches.push("idempotency_key");
  const executionId = record.metadata.execution_id;
  if (executionId !== undefined && executionId !== execution.id) mismatches.push("metadata.execution_id");
  return mismatches;
}
