import { z } from "zod";
import { dbFor, getPlatformDb } from "@/lib/db/client";
import { getEnv } from "@/lib/config/env";
import { AppError } from "@/lib/core/errors";
import { assertJsonContentType, readBodyBytes } from "@/lib/adapters/http/body";
import { validationError } from "@/lib/adapters/http/problem";
import { parseInput } from "@/lib/adapters/api/context";
import { boundedJson, scanJsonTextDepth } from "@/lib/core/json-bounds";
import { json, otherMethods, withProblems } from "@/lib/adapters/http/respond";
import { STRIPE_SIGNATURE_HEADER, verifyStripeSignature } from "@/lib/connectors/stripe/webhooks";
import { receiveStripeWebhook } from "@/lib/use-cases/reconciliation/stripe-webhook";
import { receiveProviderEvent, referencesOfStripeEvent } from "@/lib/use-cases/reconciliation/provider-event-tenants";

export const dynamic = "force-dynamic";

/** As the sandbox's webhooks: JSON.parse and every walk after it recurse, so deeper text is refused before parsing. */
const MAX_WEBHOOK_DEPTH = 64;

/** Each member of the event bounded like every free-form JSON field. */
const WebhookEnvelopeSchema = z.record(z.string(), boundedJson(z.unknown()));

/**
 * Stripe's webhooks (refund.created, refund.updated, charge.refunded). No
 * bearer token: Stripe signs each delivery with the endpoint's secret
 * (STRIPE_WEBHOOK_SECRET), checked by the `stripe` package's verifier on the
 * exact bytes, five minutes of tolerance; a bad signature is a 400 and
 * nothing is stored. Applied once per event id; a redelivery gets the first
 * result, and a 2xx either way so Stripe stops retrying.
 */
export const POST = withProblems(async (request) => {
  const secret = getEnv().STRIPE_WEBHOOK_SECRET;
  if (!secret) throw new AppError("not_found", "Stripe webhooks are not configured here (STRIPE_WEBHOOK_SECRET).");
  assertJsonContentType(request.headers.get("content-type"));
  const bytes = await readBodyBytes(request, getEnv().VERITY_MAX_BODY_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw validationError([{ field: "", message: "the request body is not valid UTF-8" }]);
  }
  const depth = scanJsonTextDepth(text, MAX_WEBHOOK_DEPTH);
  if (depth.tooDeep)
    throw validationError([{ field: depth.member ?? "", message: `nests deeper than ${MAX_WEBHOOK_DEPTH} levels` }]);
  const checked = verifyStripeSignature({
    payload: text,
    header: request.headers.get(STRIPE_SIGNATURE_HEADER),
    secret,
  });
  if (!checked.ok)
    throw validationError([
      { field: checked.refused === "signature" ? STRIPE_SIGNATURE_HEADER : "", message: checked.why },
    ]);
  parseInput(WebhookEnvelopeSchema, checked.event);
  // No caller: the tenant is the one whose execution the signed event names (provider-event-tenants.ts).
  const received = await receiveProviderEvent(
    getPlatformDb(),
    (tenantId) => dbFor({ tenantId }),
    referencesOfStripeEvent(checked.event),
    (db) => receiveStripeWebhook(db, checked.event),
  );
  const headers: Record<string, string> = received.duplicate ? { "Idempotent-Replayed": "true" } : {};
  return json({ event_id: checked.event.id, duplicate: received.duplicate, result: received.result }, { headers });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
