import { z } from "zod";
import { dbFor, getPlatformDb } from "@/lib/db/client";
import { receiveSandboxWebhook } from "@/lib/use-cases/reconciliation/reconciler";
import { receiveProviderEvent, referencesOfSandboxEvent } from "@/lib/use-cases/reconciliation/provider-event-tenants";
import { getEnv, getSandboxWebhookSecret } from "@/lib/config/env";
import { AppError } from "@/lib/core/errors";
import { assertJsonContentType, readBodyBytes } from "@/lib/adapters/http/body";
import { validationError } from "@/lib/adapters/http/problem";
import { parseInput } from "@/lib/adapters/api/context";
import { boundedJson, scanJsonTextDepth } from "@/lib/core/json-bounds";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { HEADER } from "@/lib/connectors/sandbox/contract";
import { verifyWebhookSignature } from "@/lib/connectors/sandbox/webhook-signature";

export const dynamic = "force-dynamic";

/**
 * No webhook nests this deep: JSON.parse and every walk after it recurse, so
 * deeper text is refused before it is parsed, naming the member it is in.
 */
const MAX_WEBHOOK_DEPTH = 64;

/** Each member of the event (`data`, the refund, above all) bounded like every free-form JSON field. */
const WebhookEnvelopeSchema = z.record(z.string(), boundedJson(z.unknown()));

/**
 * The sandbox provider's webhooks (`{id: "evt_…", type: "refund.succeeded",
 * data: refund}`). No bearer token: the provider signs each delivery with
 * the shared secret (Sandbox-Signature, HMAC-SHA256 over the exact bytes,
 * five minutes of tolerance), and that signature is the authentication.
 * Applied once per event id; a redelivery gets the first result, and a 2xx
 * either way so the provider stops retrying.
 */
export const POST = withProblems(async (request) => {
  assertJsonContentType(request.headers.get("content-type"));
  const bytes = await readBodyBytes(request, getEnv().VERITY_MAX_BODY_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw validationError([{ field: "", message: "the request body is not valid UTF-8" }]);
  }
  // The signature covers the bytes as sent: it is checked before anything is parsed.
  if (
    !verifyWebhookSignature({
      secret: getSandboxWebhookSecret(),
      header: request.headers.get(HEADER.signature),
      body: text,
    })
  ) {
    throw new AppError(
      "unauthenticated",
      `Missing, malformed, stale or wrong ${HEADER.signature}: this endpoint takes only the sandbox provider's signed webhooks.`,
    );
  }
  const depth = scanJsonTextDepth(text, MAX_WEBHOOK_DEPTH);
  if (depth.tooDeep)
    throw validationError([{ field: depth.member ?? "", message: `nests deeper than ${MAX_WEBHOOK_DEPTH} levels` }]);
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    throw validationError([
      { field: "", message: `malformed JSON: ${error instanceof SyntaxError ? error.message : "unparseable"}` },
    ]);
  }
  parseInput(WebhookEnvelopeSchema, payload);
  // No caller: the tenant is the one whose execution the signed event names (provider-event-tenants.ts).
  const received = await receiveProviderEvent(
    getPlatformDb(),
    (tenantId) => dbFor({ tenantId }),
    referencesOfSandboxEvent(payload),
    (db) => receiveSandboxWebhook(db, payload),
  );
  const eventId = (payload as { id?: unknown }).id;
  const headers: Record<string, string> = received.duplicate ? { "Idempotent-Replayed": "true" } : {};
  return json({ event_id: eventId, duplicate: received.duplicate, result: received.result }, { headers });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
