import { describe, expect, it } from "vitest";
import type { HttpExchange } from "@/lib/connectors/http-exchange";
import { classifyCreate, classifyLookup } from "@/lib/connectors/sandbox/outcomes";
import { noteSchema } from "@/lib/connectors/sandbox/contract";

/** The outcome rules as a table: what each answer says about the provider's state. */

const site = { operation: "refunds.create", idempotencyKey: "k" };

function response(status: number, json: unknown, headers: Record<string, string> = {}): HttpExchange {
  return {
    kind: "response",
    status,
    headers: new Headers(headers),
    text: json === undefined ? "" : JSON.stringify(json),
    json,
    receivedAt: new Date("2026-01-01T00:00:00Z"),
  };
}

const error = (code: string, type = "invalid_request_error") => ({ error: { type, code, message: `said ${code}` } });
const accept = (json: unknown) => ({ ok: true as const, value: json });

describe("classifyCreate", () => {
  it.each([
    [
      "400 parameter_invalid",
      response(400, error("parameter_invalid")),
      { kind: "failed", reason: "invalid_request", retryable: false },
    ],
    [
      "400 idempotency_key_missing",
      response(400, error("idempotency_key_missing")),
      { kind: "failed", reason: "invalid_request", retryable: false },
    ],
    ["413", response(413, error("payload_too_large")), { kind: "failed", reason: "invalid_request", retryable: false }],
    [
      "409 key reused: something is already stored under the key",
      response(409, error("idempotency_key_reused", "idempotency_error")),
      { kind: "unknown", reason: "idempotency_key_reused", httpStatus: 409 },
    ],
    [
      "409 key in use",
      response(409, error("idempotency_key_in_use", "idempotency_error")),
      { kind: "unknown", reason: "in_flight" },
    ],
    ["404", response(404, error("resource_missing")), { kind: "failed", reason: "rejected", retryable: false }],
    [
      "503 not_processed",
      response(503, error("not_processed", "api_error")),
      { kind: "failed", reason: "not_processed", retryable: true },
    ],
    [
      "500 internal_error",
      response(500, error("internal_error", "api_error")),
      { kind: "unknown", reason: "server_error" },
    ],
    ["502 without a body", response(502, undefined), { kind: "unknown", reason: "server_error" }],
    [
      "503 with a foreign body",
      response(503, { message: "not_processed" }),
      { kind: "unknown", reason: "server_error" },
    ],
    ["400 with a foreign body", response(400, { error: "bad" }), { kind: "unknown", reason: "unexpected_response" }],
    ["302", response(302, undefined), { kind: "unknown", reason: "unexpected_response" }],
    ["timeout", { kind: "lost", reason: "timeout", message: "t" }, { kind: "unknown", reason: "timeout" }],
    [
      "reset",
      { kind: "lost", reason: "connection_lost", message: "r" },
      { kind: "unknown", reason: "connection_lost" },
    ],
    ["abort after send", { kind: "lost", reason: "aborted", message: "a" }, { kind: "unknown", reason: "aborted" }],
    [
      "refused connection",
      { kind: "not_sent", reason: "unreachable", message: "u" },
      { kind: "failed", reason: "unreachable", retryable: true },
    ],
    [
      "cancelled before send",
      { kind: "not_sent", reason: "cancelled", message: "c" },
      { kind: "failed", reason: "cancelled", retryable: true },
    ],
  ] as Array<[string, HttpExchange, object]>)("%s", (_what, ex, expected) => {
    expect(classifyCreate(ex, site, accept)).toMatchObject(expected);
  });

  it("a 2xx is success only when the check accepts it, with evidence", () => {
    const ok = classifyCreate(
      response(200, { id: "x" }, { "Request-Id": "req_1", "Idempotent-Replayed": "true" }),
      site,
      accept,
    );
    expect(ok).toMatchObject({
      kind: "succeeded",
      evidence: {
        provider: "sandbox",
        httpStatus: 200,
        providerRequestId: "req_1",
        replayed: true,
        idempotencyKey: "k",
        receivedAt: "2026-01-01T00:00:00.000Z",
      },
    });
    expect(classifyCreate(response(200, { id: "x" }), site, () => ({ ok: false, why: "amount differs" }))).toEqual({
      kind: "unknown",
      reason: "unexpected_response",
      message: "amount differs",
      httpStatus: 200,
    });
  });
});

describe("classifyLookup", () => {
  const note = {
    id: "note_1",
    customer_id: "c",
    text: "t",
    metadata: {},
    idempotency_key: "k",
    created_at: "2026-01-01T00:00:00.000Z",
  };
  const lookup = (ex: HttpExchange) => classifyLookup(ex, site, noteSchema, (n) => n.id);

  it.each([
    ["one matching item", response(200, { data: [note], in_flight: false }), { kind: "found", value: "note_1" }],
    ["an empty list", response(200, { data: [], in_flight: false }), { kind: "not_found" }],
    [
      "an empty list while in flight",
      response(200, { data: [], in_flight: true }),
      { kind: "unknown", reason: "in_flight" },
    ],
    [
      "an item of another key",
      response(200, { data: [{ ...note, idempotency_key: "other" }] }),
      { kind: "unknown", reason: "unexpected_response" },
    ],
    ["two items", response(200, { data: [note, note] }), { kind: "unknown", reason: "unexpected_response" }],
    ["a list that does not parse", response(200, { items: [] }), { kind: "unknown", reason: "unexpected_response" }],
    [
      "503 not_processed",
      response(503, error("not_processed", "api_error")),
      { kind: "unknown", reason: "server_error" },
    ],
    ["400", response(400, error("parameter_invalid")), { kind: "unknown", reason: "unexpected_response" }],
    ["timeout", { kind: "lost", reason: "timeout", message: "t" }, { kind: "unknown", reason: "timeout" }],
    [
      "unreachable",
      { kind: "not_sent", reason: "unreachable", message: "u" },
      { kind: "unknown", reason: "unreachable" },
    ],
  ] as Array<[string, HttpExchange, object]>)("%s", (_what, ex, expected) => {
    expect(lookup(ex)).toMatchObject(expected);
  });
});
