import { z } from "zod";

/**
 * The wire contract of the sandbox provider: header names, request bodies,
 * resources and the error body. The server validates with these schemas and
 * the sandbox connectors parse responses with them, so the two cannot drift.
 * Field names are snake_case, as on the wire of the providers it imitates.
 */

export const HEADER = {
  idempotencyKey: "Idempotency-Key",
  /** "true" on a response that is the stored result of an earlier request with the same key. */
  replayed: "Idempotent-Replayed",
  requestId: "Request-Id",
  fault: "X-Sandbox-Fault",
  webhookUrl: "X-Sandbox-Webhook-Url",
  signature: "Sandbox-Signature",
} as const;

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Stripe's metadata rules: at most 50 string values under short keys. */
export const metadataSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/, "metadata keys are 1–40 of A-Z a-z 0-9 _ . -"),
    z.string().max(500),
  )
  .refine((m) => Object.keys(m).length <= 50, "at most 50 metadata keys");

const providerId = z.string().min(1).max(255);

export const createRefundBodySchema = z.strictObject({
  amount_cents: z.number().int().positive().max(99_999_999),
  currency: z.string().regex(/^[a-z]{3}$/, "a lower-case ISO 4217 code such as usd"),
  charge_id: providerId,
  customer_id: providerId,
  metadata: metadataSchema.optional(),
});

export const refundSchema = z.object({
  id: z.string().startsWith("re_"),
  status: z.literal("succeeded"),
  amount_cents: z.number().int(),
  currency: z.string(),
  charge_id: z.string(),
  customer_id: z.string(),
  metadata: metadataSchema,
  idempotency_key: z.string(),
  created_at: z.iso.datetime(),
});
export type SandboxRefund = z.infer<typeof refundSchema>;

export const createNoteBodySchema = z.strictObject({
  text: z.string().min(1).max(10_000),
  metadata: metadataSchema.optional(),
});

export const noteSchema = z.object({
  id: z.string().startsWith("note_"),
  customer_id: z.string(),
  text: z.string(),
  metadata: metadataSchema,
  idempotency_key: z.string(),
  created_at: z.iso.datetime(),
});
export type SandboxNote = z.infer<typeof noteSchema>;

/**
 * The release service of the delivery scenario: a deploy of a service's
 * version to an environment, applied at most once per idempotency key like
 * every other effect here. Verity has no connector for it: the tool
 * `deploy.release` is registered, and its workers answer Verity's lookups by
 * asking this service (programs/agent/delivery/).
 */
export const createReleaseBodySchema = z.strictObject({
  service: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lower-case letters, digits and -"),
  version: z.string().min(1).max(64),
  environment: z.enum(["staging", "production"]),
  commit: z.string().regex(/^[0-9a-f]{7,40}$/, "a git commit id"),
  metadata: metadataSchema.optional(),
});

export const releaseSchema = z.object({
  id: z.string().startsWith("rel_"),
  status: z.literal("deployed"),
  service: z.string(),
  version: z.string(),
  environment: z.string(),
  commit: z.string(),
  metadata: metadataSchema,
  idempotency_key: z.string(),
  created_at: z.iso.datetime(),
});
export type SandboxRelease = z.infer<typeof releaseSchema>;

/**
 * A rollback undoes a deployed release (deploy.rollback, the compensating
 * tool of deploy.release): the release is named by what it deployed, the
 * compensated call's own request, so its body is a release's
 * (createReleaseBodySchema). Applied at most once per key; a rollback of a
 * release that was never deployed is a 400 that applied nothing.
 */
export const rollbackSchema = releaseSchema.extend({
  id: z.string().startsWith("rbk_"),
  status: z.literal("rolled_back"),
  release_id: z.string().startsWith("rel_"),
});
export type SandboxRollback = z.infer<typeof rollbackSchema>;

type ListSchema<T extends z.ZodType> = z.ZodObject<{ data: z.ZodArray<T>; in_flight: z.ZodOptional<z.ZodBoolean> }>;

/**
 * One list schema per item schema, built once: zod compiles an object schema
 * into a parser at its first parse, so a list schema built for each lookup
 * (classifyLookup) was compiled again at every lookup, about 0.17 ms of a
 * ledger refund's client CPU (docs/benchmarks.md, "Planned once").
 */
const listSchemas = new WeakMap<z.ZodType, ListSchema<z.ZodType>>();

/**
 * A list. `in_flight` is present on lookups by idempotency key: true when a
 * request with that key is being processed right now, so an empty `data` is
 * not yet a final "no such effect".
 */
export function listSchema<T extends z.ZodType>(item: T): ListSchema<T> {
  const built = listSchemas.get(item) as ListSchema<T> | undefined;
  if (built) return built;
  const list = z.object({ data: z.array(item), in_flight: z.boolean().optional() });
  listSchemas.set(item, list);
  return list;
}
export const refundListSchema = listSchema(refundSchema);
export const noteListSchema = listSchema(noteSchema);
export const releaseListSchema = listSchema(releaseSchema);
export const rollbackListSchema = listSchema(rollbackSchema);

export const webhookEventSchema = z.object({
  id: z.string().startsWith("evt_"),
  type: z.literal("refund.succeeded"),
  created_at: z.iso.datetime(),
  data: refundSchema,
});
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/**
 * Error codes and what each says about the provider's state. Only
 * `not_processed` on a 5xx is a statement that nothing was stored; a 5xx with
 * any other code (or no sandbox error body at all) leaves the state unknown.
 */
export const errorCodes = [
  "parameter_invalid", // 400: a body field, query parameter or header is invalid; nothing stored
  "idempotency_key_missing", // 400: POST without Idempotency-Key; nothing stored
  "release_not_deployed", // 400: a rollback of a release that was never deployed; nothing stored
  "resource_missing", // 404
  "method_not_allowed", // 405
  "reset_disabled", // 403: /__sandbox/reset on a sandbox started without allowReset
  "idempotency_key_reused", // 409: the key was used with other parameters; this request did nothing
  "idempotency_key_in_use", // 409: a request with the key is still being processed; its outcome is open
  "payload_too_large", // 413
  "unsupported_media_type", // 415
  "internal_error", // 500: the request may or may not have been applied
  "not_processed", // 503: the provider states nothing was stored; retrying with the same key is safe
] as const;
export type ErrorCode = (typeof errorCodes)[number];

export const errorTypes = ["invalid_request_error", "idempotency_error", "api_error"] as const;
export type ErrorType = (typeof errorTypes)[number];

export const errorBodySchema = z.object({
  error: z.object({
    type: z.enum(errorTypes),
    code: z.enum(errorCodes),
    message: z.string(),
    param: z.string().optional(),
  }),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
