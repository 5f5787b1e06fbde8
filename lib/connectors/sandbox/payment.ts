import { exchange } from "@/lib/connectors/http-exchange";
import { classifyCreate, classifyLookup } from "@/lib/connectors/sandbox/outcomes";
import {
  assertEffectIdentity,
  DEFAULT_TIMEOUT_MS,
  faultHeaders,
  type SandboxConnectorOptions,
} from "@/lib/connectors/sandbox/options";
import type {
  CallOptions,
  PaymentConnector,
  Refund,
  RefundLookup,
  RefundOutcome,
  RefundRequest,
} from "@/lib/connectors/types";
import { HEADER, refundSchema, type SandboxRefund } from "@/lib/connectors/sandbox/contract";

/**
 * PaymentConnector over the sandbox provider (programs/sandbox). The outcome rules
 * are in lib/connectors/sandbox/outcomes.ts and the meaning of each outcome
 * in lib/connectors/types.ts.
 */

export function refundFromWire(r: SandboxRefund): Refund {
  return {
    id: r.id,
    status: r.status,
    amountCents: r.amount_cents,
    currency: r.currency,
    chargeId: r.charge_id,
    customerId: r.customer_id,
    metadata: r.metadata,
    idempotencyKey: r.idempotency_key,
    createdAt: r.created_at,
  };
}

export class SandboxPaymentConnector implements PaymentConnector {
  readonly provider = "sandbox";

  constructor(private readonly options: SandboxConnectorOptions) {}

  async refund(request: RefundRequest, call: CallOptions = {}): Promise<RefundOutcome> {
    assertEffectIdentity(request.idempotencyKey, request.metadata);
    const body = {
      amount_cents: request.amountCents,
      currency: request.currency,
      charge_id: request.chargeId,
      customer_id: request.customerId,
      metadata: { execution_id: request.metadata.executionId, task_id: request.metadata.taskId },
    };
    const headers: Record<string, string> = {
      ...faultHeaders(this.options.faults),
      [HEADER.idempotencyKey]: request.idempotencyKey,
    };
    if (this.options.webhookUrl) headers[HEADER.webhookUrl] = this.options.webhookUrl;
    const ex = await exchange(
      { url: `${this.options.baseUrl}/v1/refunds`, method: "POST", headers, body },
      { timeoutMs: call.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: call.signal },
    );
    const outcome = classifyCreate(
      ex,
      { operation: "refunds.create", idempotencyKey: request.idempotencyKey },
      (json) => {
        const parsed = refundSchema.safeParse(json);
        if (!parsed.success) return { ok: false, why: `the refund does not parse: ${parsed.error.message}` };
        const r = parsed.data;
        const mismatches = [
          r.idempotency_key !== request.idempotencyKey && "idempotency_key",
          r.amount_cents !== body.amount_cents && "amount_cents",
          r.currency !== body.currency && "currency",
          r.charge_id !== body.charge_id && "charge_id",
          r.customer_id !== body.customer_id && "customer_id",
          r.metadata.execution_id !== body.metadata.execution_id && "metadata.execution_id",
        ].filter(Boolean);
        if (mismatches.length)
          return { ok: false, why: `the refund ${r.id} does not match the request: ${mismatches.join(", ")}` };
        return { ok: true, value: refundFromWire(r) };
      },
    );
    return outcome.kind === "succeeded"
      ? { kind: "succeeded", refund: outcome.value, evidence: outcome.evidence }
      : outcome;
  }

  async lookupRefund(idempotencyKey: string, call: CallOptions = {}): Promise<RefundLookup> {
    const url = `${this.options.baseUrl}/v1/refunds?idempotency_key=${encodeURIComponent(idempotencyKey)}`;
    const ex = await exchange(
      { url, method: "GET", headers: faultHeaders(this.options.lookupFaults) },
      { timeoutMs: call.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: call.signal },
    );
    const found = classifyLookup(ex, { operation: "refunds.lookup", idempotencyKey }, refundSchema, refundFromWire);
    return found.kind === "found" ? { kind: "found", refund: found.value, evidence: found.evidence } : found;
  }
}
