/** The events part of the OpenAPI document: inbound events and the providers' signed webhooks (the sandbox's, Stripe's). */
import {
  jsonContent,
  type JsonSchema,
  problems,
  ref,
  type SchemaEntries,
} from "@/lib/adapters/openapi/shared-components";
import { InboundEventSchema } from "@/lib/stores/messaging";
import { webhookEventSchema } from "@/lib/connectors/sandbox/contract";
import { stripeEventSchema } from "@/lib/connectors/stripe/webhooks";
import { EventReceiptSchema } from "@/lib/adapters/api/event-resources";

export const eventRequestSchemas: SchemaEntries = [
  ["InboundEvent", InboundEventSchema],
  ["SandboxWebhookEvent", webhookEventSchema],
  ["StripeRefundEvent", stripeEventSchema],
];

export const eventResponseSchemas: SchemaEntries = [["EventReceipt", EventReceiptSchema]];

export function eventPaths(): Record<string, JsonSchema> {
  return {
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
          200: {
            description: "Received before: the first receipt.",
            headers: { "Idempotent-Replayed": { schema: { type: "string", const: "true" } } },
            content: jsonContent(ref("EventReceipt")),
          },
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
          'Authenticated by Sandbox-Signature (t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> with the shared secret, at most 300 s old), not by a bearer token. ' +
          "A refund.succeeded event is evidence like a provider lookup: it settles a SENT or unknown execution, and raises a divergence against a recorded failure. " +
          "Applied once per event id; a redelivery gets the first result.",
        security: [],
        parameters: [
          {
            name: "Sandbox-Signature",
            in: "header",
            required: true,
            schema: { type: "string", example: "t=1764460800,v1=5f…" },
          },
        ],
        requestBody: { required: true, content: jsonContent(ref("SandboxWebhookEvent")) },
        responses: {
          200: { description: "Applied, or received before.", content: jsonContent(ref("EventReceipt")) },
          ...problems(400, 401, 409, 413, 415),
        },
      },
    },
    "/api/v1/events/stripe": {
      post: {
        tags: ["events"],
        operationId: "receiveStripeWebhook",
        summary: "Stripe's signed webhooks (refund.created, refund.updated, charge.refunded)",
        description:
          "Authenticated by Stripe-Signature, checked by the stripe package's verifier with STRIPE_WEBHOOK_SECRET (at most 300 s old), not by a bearer token; " +
          "a missing, wrong or stale signature is a 400 naming Stripe-Signature, and nothing is stored. " +
          "A succeeded refund is evidence like a provider lookup, tied to its execution by metadata.execution_id (or metadata.idempotency_key); " +
          "a pending or failed one is recorded and applies nothing, as does an event of another type. " +
          "Applied once per event id; a redelivery gets the first result (Idempotent-Replayed). 404 when STRIPE_WEBHOOK_SECRET is not set.",
        security: [],
        parameters: [
          {
            name: "Stripe-Signature",
            in: "header",
            required: true,
            schema: { type: "string", example: "t=1764460800,v1=5f…" },
          },
        ],
        requestBody: { required: true, content: jsonContent(ref("StripeRefundEvent")) },
        responses: {
          200: { description: "Applied, or received before.", content: jsonContent(ref("EventReceipt")) },
          ...problems(400, 404, 409, 413, 415),
        },
      },
    },
  };
}
