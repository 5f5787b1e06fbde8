import Stripe from "stripe";
import { z } from "zod";

/**
 * Stripe's webhooks, as Verity receives them: the signature checked by the
 * `stripe` package's own verifier (Stripe-Signature: `t=…,v1=…`, HMAC-SHA256
 * of "<t>.<body>" under the endpoint's whsec_ secret, the timestamp within a
 * tolerance so an old delivery cannot be replayed), then the parts Verity
 * reads parsed strictly enough that a signed but malformed event is refused
 * by name rather than half-applied.
 */

export const STRIPE_SIGNATURE_HEADER = "Stripe-Signature";
/** Stripe's own default: a delivery signed more than five minutes ago is refused. */
export const STRIPE_WEBHOOK_TOLERANCE_SECONDS = 300;

const idRef = z.union([z.string().min(1).max(255), z.object({ id: z.string().min(1).max(255) })]);

export const stripeRefundEventObjectSchema = z.object({
  id: z.string().startsWith("re_").max(255),
  object: z.literal("refund"),
  amount: z.number().int().nonnegative(),
  currency: z.string().min(3).max(3),
  charge: idRef.nullable(),
  customer: idRef.nullable().optional(),
  created: z.number().int().nonnegative(),
  metadata: z.record(z.string(), z.string()).nullable(),
  status: z.string().nullable().optional(),
  failure_reason: z.string().optional(),
});
export type StripeRefundEventObject = z.infer<typeof stripeRefundEventObjectSchema>;

const chargeEventObjectSchema = z.object({
  id: z.string().min(1).max(255),
  object: z.literal("charge"),
  refunds: z
    .object({ data: z.array(stripeRefundEventObjectSchema).max(100) })
    .nullable()
    .optional(),
});

export const stripeEventSchema = z.discriminatedUnion("type", [
  z.object({
    id: z.string().startsWith("evt_").max(200),
    type: z.enum(["refund.created", "refund.updated"]),
    data: z.object({ object: stripeRefundEventObjectSchema }),
  }),
  z.object({
    id: z.string().startsWith("evt_").max(200),
    type: z.literal("charge.refunded"),
    data: z.object({ object: chargeEventObjectSchema }),
  }),
]);

export type StripeSignatureCheck =
  | { ok: true; event: Stripe.Event }
  /** `signature`: missing, malformed, stale or wrong; `body`: signed, but not JSON. */
  | { ok: false; refused: "signature" | "body"; why: string };

/** Whether `header` signs exactly `payload` under `secret`, recently enough; the event when it does. */
export function verifyStripeSignature(input: {
  payload: string;
  header: string | null;
  secret: string;
  toleranceSeconds?: number;
}): StripeSignatureCheck {
  if (!input.header) return { ok: false, refused: "signature", why: `no ${STRIPE_SIGNATURE_HEADER} header` };
  try {
    const event = Stripe.webhooks.constructEvent(
      input.payload,
      input.header,
      input.secret,
      input.toleranceSeconds ?? STRIPE_WEBHOOK_TOLERANCE_SECONDS,
    );
    return { ok: true, event };
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError)
      // The package's message goes on about forwarding proxies and links its docs: its first line says what failed.
      return { ok: false, refused: "signature", why: error.message.split("\n")[0]?.trim() || "bad signature" };
    // constructEvent parses only after the signature held.
    if (error instanceof SyntaxError) return { ok: false, refused: "body", why: `malformed JSON: ${error.message}` };
    throw error;
  }
}
