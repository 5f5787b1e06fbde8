import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import { refundRecord } from "@/lib/connectors/effects";
import { refundFromStripe, unsettledOf } from "@/lib/connectors/stripe/payment";
import { stripeEventSchema, type StripeRefundEventObject } from "@/lib/connectors/stripe/webhooks";
import { receiveEvent, type ReceiveResult } from "@/lib/stores/messaging";
import { applyRefundSucceeded, type RefundEventResult } from "@/lib/use-cases/reconciliation/reconciler";

/**
 * Stripe's refund events, verified by the route (Stripe-Signature) and
 * received once per event id through the inbox: a redelivery changes
 * nothing and gets the first result. A refund is evidence like a lookup
 * (applyRefundSucceeded: it settles a SENT or unknown execution, corrects a
 * recorded failure, is noted on a review), and is tied to its execution by
 * metadata.execution_id (or metadata.idempotency_key), both written by the
 * connector on create. Only a succeeded refund is evidence of an effect; a
 * pending or failed one is recorded and applies nothing.
 */

export const STRIPE_SOURCE = "stripe";

export interface StripeRefundOutcome {
  refund_id: string;
  result: RefundEventResult | { applied: false; outcome: "not_succeeded"; status: string | null };
}

export interface StripeEventResult {
  type: string;
  /** Empty for an event of a type Verity does not read: recorded, nothing applied. */
  refunds: StripeRefundOutcome[];
}

/** Inbox ids are unique across providers: Stripe's event ids are kept apart from the sandbox's. */
export function stripeInboxId(eventId: string): string {
  return `${STRIPE_SOURCE}:${eventId}`;
}

const readTypes = new Set(["refund.created", "refund.updated", "charge.refunded"]);
const anyEventSchema = z.object({ id: z.string().startsWith("evt_").max(200), type: z.string().min(1).max(128) });

export async function receiveStripeWebhook(db: Db, payload: unknown): Promise<ReceiveResult<StripeEventResult>> {
  const envelope = anyEventSchema.safeParse(payload);
  if (!envelope.success)
    throw new AppError(
      "validation_failed",
      `Not a Stripe event: ${envelope.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`,
    );
  if (!readTypes.has(envelope.data.type)) {
    // An endpoint subscribed to more than refunds: received once and answered 2xx, or Stripe retries it for days.
    const { id, type } = envelope.data;
    return receiveEvent(
      db,
      { event_id: stripeInboxId(id), source: STRIPE_SOURCE, type, payload: payload as Record<string, unknown> },
      async () => ({ type, refunds: [] }),
    );
  }
  const parsed = stripeEventSchema.safeParse(payload);
  if (!parsed.success) {
    throw new AppError(
      "validation_failed",
      `Not a Stripe refund event Verity reads (refund.created, refund.updated, charge.refunded): ${parsed.error.issues
        .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
        .join("; ")}`,
    );
  }
  const event = parsed.data;
  const refunds: StripeRefundEventObject[] =
    event.type === "charge.refunded" ? (event.data.object.refunds?.data ?? []) : [event.data.object];
  // The inbox row names the task when one refund's metadata does (ours always does); a foreign value is kept out.
  const taskIds = new Set(refunds.map((r) => r.metadata?.task_id).filter((t): t is string => !!t && t.length <= 128));
  const taskId = taskIds.size === 1 ? [...taskIds][0] : undefined;
  return receiveEvent(
    db,
    {
      event_id: stripeInboxId(event.id),
      source: STRIPE_SOURCE,
      type: event.type,
      ...(taskId ? { task_id: taskId } : {}),
      payload: event as unknown as Record<string, unknown>,
    },
    async (tx) => {
      const outcomes: StripeRefundOutcome[] = [];
      for (const r of refunds) {
        if (unsettledOf(r) !== null) {
          outcomes.push({
            refund_id: r.id,
            result: { applied: false, outcome: "not_succeeded", status: r.status ?? null },
          });
          continue;
        }
        const record = refundRecord(refundFromStripe(r));
        outcomes.push({
          refund_id: r.id,
          result: await applyRefundSucceeded(tx, { eventId: event.id, source: STRIPE_SOURCE, record }),
        });
      }
      return { type: event.type, refunds: outcomes };
    },
  );
}
