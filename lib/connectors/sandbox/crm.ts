import { exchange } from "@/lib/connectors/http-exchange";
import { classifyCreate, classifyLookup } from "@/lib/connectors/sandbox/outcomes";
import {
  assertEffectIdentity,
  DEFAULT_TIMEOUT_MS,
  faultHeaders,
  type SandboxConnectorOptions,
} from "@/lib/connectors/sandbox/options";
import type { CallOptions, CrmConnector, Note, NoteLookup, NoteOutcome, NoteRequest } from "@/lib/connectors/types";
import { HEADER, noteSchema, type SandboxNote } from "@/lib/connectors/sandbox/contract";

/** CrmConnector over the sandbox's CRM; the same outcome rules as its payments. */

export function noteFromWire(n: SandboxNote): Note {
  return {
    id: n.id,
    customerId: n.customer_id,
    text: n.text,
    metadata: n.metadata,
    idempotencyKey: n.idempotency_key,
    createdAt: n.created_at,
  };
}

export class SandboxCrmConnector implements CrmConnector {
  readonly provider = "sandbox";

  constructor(private readonly options: SandboxConnectorOptions) {}

  async addNote(request: NoteRequest, call: CallOptions = {}): Promise<NoteOutcome> {
    assertEffectIdentity(request.idempotencyKey, request.metadata);
    const body = {
      text: request.text,
      metadata: { execution_id: request.metadata.executionId, task_id: request.metadata.taskId },
    };
    const ex = await exchange(
      {
        url: `${this.options.baseUrl}/v1/crm/customers/${encodeURIComponent(request.customerId)}/notes`,
        method: "POST",
        headers: { ...faultHeaders(this.options.faults), [HEADER.idempotencyKey]: request.idempotencyKey },
        body,
      },
      { timeoutMs: call.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: call.signal },
    );
    const outcome = classifyCreate(
      ex,
      { operation: "crm.notes.create", idempotencyKey: request.idempotencyKey },
      (json) => {
        const parsed = noteSchema.safeParse(json);
        if (!parsed.success) return { ok: false, why: `the note does not parse: ${parsed.error.message}` };
        const n = parsed.data;
        if (
          n.idempotency_key !== request.idempotencyKey ||
          n.customer_id !== request.customerId ||
          n.text !== request.text ||
          n.metadata.execution_id !== body.metadata.execution_id
        ) {
          return { ok: false, why: `the note ${n.id} does not match the request` };
        }
        return { ok: true, value: noteFromWire(n) };
      },
    );
    return outcome.kind === "succeeded"
      ? { kind: "succeeded", note: outcome.value, evidence: outcome.evidence }
      : outcome;
  }

  async lookupNote(idempotencyKey: string, call: CallOptions = {}): Promise<NoteLookup> {
    const url = `${this.options.baseUrl}/v1/crm/notes?idempotency_key=${encodeURIComponent(idempotencyKey)}`;
    const ex = await exchange(
      { url, method: "GET", headers: faultHeaders(this.options.lookupFaults) },
      { timeoutMs: call.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal: call.signal },
    );
    const found = classifyLookup(ex, { operation: "crm.notes.lookup", idempotencyKey }, noteSchema, noteFromWire);
    return found.kind === "found" ? { kind: "found", note: found.value, evidence: found.evidence } : found;
  }
}
