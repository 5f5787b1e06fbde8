import { createHash } from "node:crypto";
import { seededRandom } from "@/lib/core/seeded-random";

/**
 * The demo's order: what a refund needs. Its identity travels in the task's
 * intent_id (`refund:<order>:<amount>:<currency>`), because the tool request
 * must be byte-for-byte the same on every retry and after a crash (Verity
 * compares its digest), and the task state has no free-form field for it.
 * Charge and customer come from a deterministic "lookup" of the order.
 */
export interface Order {
  orderId: string;
  amountCents: number;
  currency: string;
  chargeId: string;
  customerId: string;
}

const intentPattern = /^refund:([A-Za-z0-9._-]{1,80}):(\d{1,9}):([a-z]{3})$/;

export function orderOf(orderId: string, amountCents: number, currency: string): Order {
  return { orderId, amountCents, currency, chargeId: `ch_${orderId}`, customerId: `cus_${orderId}` };
}

export function intentIdOf(order: Order): string {
  return `refund:${order.orderId}:${order.amountCents}:${order.currency}`;
}

/** The order a task was created for; null for tasks this agent did not create. */
export function orderOfIntent(intentId: string): Order | null {
  const m = intentPattern.exec(intentId);
  if (!m?.[1] || !m[2] || !m[3]) return null;
  return orderOf(m[1], Number(m[2]), m[3]);
}

export function taskIdOf(order: Order): string {
  return `refund-${order.orderId}`;
}

export function refundRequestOf(order: Order) {
  return {
    amount_cents: order.amountCents,
    currency: order.currency,
    charge_id: order.chargeId,
    customer_id: order.customerId,
  };
}

export function noteRequestOf(order: Order) {
  const amount = `${(order.amountCents / 100).toFixed(2)} ${order.currency.toUpperCase()}`;
  return { customer_id: order.customerId, text: `Refunded ${amount} for order ${order.orderId}.` };
}

/**
 * One drawn fault as the X-Sandbox-Fault value of its call. `a+b` is a single
 * fault made of two (`latency=30000+error_before_commit`: the provider holds
 * the request, then declines it), which a comma-separated --faults list could
 * not say.
 */
export function faultHeaderOf(fault: string): string {
  return fault
    .split("+")
    .map((part) => part.trim())
    .join(",");
}

/**
 * Which sandbox fault (X-Sandbox-Fault) each external call of a task gets:
 * with probability `rate`, one of `faults`. Seeded per task, so a task meets
 * the same faults whatever the concurrency, and again on a rerun.
 */
export class FaultChooser {
  private readonly next: () => number;

  constructor(
    private readonly faults: readonly string[],
    private readonly rate: number,
    seed: number,
    taskId: string,
  ) {
    const digest = createHash("sha256").update(`${seed}:${taskId}`).digest();
    this.next = seededRandom(digest.readUInt32BE(0));
  }

  draw(): string | undefined {
    if (this.faults.length === 0 || this.next() >= this.rate) return undefined;
    return this.faults[Math.floor(this.next() * this.faults.length)];
  }
}
