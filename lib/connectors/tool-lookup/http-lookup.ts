import { z } from "zod";
import { digestOf } from "@/lib/core/canonical-json";
import { exchange } from "@/lib/connectors/http-exchange";
import { signWebhook, verifyWebhookSignature } from "@/lib/connectors/sandbox/webhook-signature";
import type { CallOptions, ProviderEvidence } from "@/lib/connectors/types";
import type { EffectLookup, ProviderRecord } from "@/lib/connectors/effects";

/**
 * The `http` reconciliation of a registered tool: Verity asks the tool
 * owner's lookup endpoint what it holds under an idempotency key. Verity
 * holds no credentials for the tool itself; the endpoint and Verity share
 * only the lookup secret (VERITY_LOOKUP_SECRET), which signs both ways:
 *
 *   request   POST <url>, body {tool, tool_version, idempotency_key, execution_id, task_id, request},
 *             `Verity-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (the outbox's scheme)
 *   answer    200, the same header over the answer's body, and
 *             {idempotency_key, result: "found", record: {id, idempotency_key, …}}
 *             | {idempotency_key, result: "not_found"} | {idempotency_key, result: "unknown", reason?}
 *
 * An unsigned or wrongly signed answer, one about another key, a timeout, a
 * 5xx or anything that does not parse is unknown: a lookup that cannot be
 * trusted never settles an effect either way. The contract is in the
 * OpenAPI document as a callback (lib/adapters/openapi/tool-paths.ts) and in docs/tools.md.
 */

export interface LookupQuestion {
  tool: string;
  toolVersion: number;
  idempotencyKey: string;
  executionId: string;
  taskId: string;
  request: Record<string, unknown>;
}

const recordSchema = z.looseObject({
  id: z.string().min(1).max(256),
  idempotency_key: z.string().min(1).max(256),
  metadata: z.record(z.string(), z.string()).optional(),
});

export const LookupAnswerSchema = z.discriminatedUnion("result", [
  z.strictObject({ idempotency_key: z.string(), result: z.literal("found"), record: recordSchema }),
  z.strictObject({ idempotency_key: z.string(), result: z.literal("not_found") }),
  z.strictObject({ idempotency_key: z.string(), result: z.literal("unknown"), reason: z.string().max(500).optional() }),
]);

/** The record as the engine compares it: the provider's own fields, with metadata always present. */
export function providerRecordOf(record: z.infer<typeof recordSchema>): ProviderRecord {
  return { ...record, metadata: record.metadata ?? {} };
}

export class HttpToolLookupConnector {
  constructor(private readonly options: { secret: string; timeoutMs?: number }) {}

  async lookup(url: string, question: LookupQuestion, call: CallOptions = {}): Promise<EffectLookup> {
    const body = JSON.stringify({
      tool: question.tool,
      tool_version: question.toolVersion,
      idempotency_key: question.idempotencyKey,
      execution_id: question.executionId,
      task_id: question.taskId,
      request: question.request,
    });
    const signature = signWebhook(this.options.secret, body, Math.floor(Date.now() / 1000));
    const ex = await exchange(
      { url, method: "POST", rawBody: body, headers: { "Verity-Signature": signature, "User-Agent": "verity-lookup" } },
      { timeoutMs: call.timeoutMs ?? this.options.timeoutMs ?? 5_000, signal: call.signal },
    );
    if (ex.kind !== "response")
      return {
        kind: "unknown",
        reason: ex.reason === "cancelled" ? "aborted" : ex.reason,
        message: `lookup ${ex.message}`,
      };
    if (ex.status >= 500)
      return {
        kind: "unknown",
        reason: "server_error",
        message: `the lookup endpoint answered ${ex.status}`,
        httpStatus: ex.status,
      };
    if (ex.status !== 200)
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message: `the lookup endpoint answered ${ex.status}, not 200`,
        httpStatus: ex.status,
      };
    if (
      !verifyWebhookSignature({
        secret: this.options.secret,
        header: ex.headers.get("Verity-Signature"),
        body: ex.text,
      })
    )
      return {
        kind: "unknown",
        reason: "bad_signature",
        message: "the lookup answer is not signed with the lookup secret: it is not the tool owner's word",
        httpStatus: ex.status,
      };
    const answer = LookupAnswerSchema.safeParse(ex.json);
    if (!answer.success)
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message:
          `the lookup answer does not parse: ${answer.error.issues.map((i) => `${i.path.join(".") || "(body)"} ${i.message}`).join("; ")}`.slice(
            0,
            500,
          ),
        httpStatus: ex.status,
      };
    if (answer.data.idempotency_key !== question.idempotencyKey)
      return {
        kind: "unknown",
        reason: "unexpected_response",
        message: `the lookup answer is about key ${answer.data.idempotency_key}, not ${question.idempotencyKey}`,
        httpStatus: ex.status,
      };
    const evidence: ProviderEvidence = {
      provider: `http-lookup:${new URL(url).host}`,
      operation: `${question.tool}.lookup`,
      idempotencyKey: question.idempotencyKey,
      httpStatus: ex.status,
      providerRequestId: ex.headers.get("Request-Id"),
      replayed: false,
      receivedAt: ex.receivedAt.toISOString(),
      bodyDigest: digestOf(ex.json ?? ex.text),
    };
    switch (answer.data.result) {
      case "found":
        return { kind: "found", record: providerRecordOf(answer.data.record), evidence };
      case "not_found":
        return { kind: "not_found", evidence };
      case "unknown":
        return {
          kind: "unknown",
          reason: "in_flight",
          message: `the tool owner cannot say yet${answer.data.reason ? `: ${answer.data.reason}` : ""}`,
          httpStatus: ex.status,
        };
    }
  }
}
