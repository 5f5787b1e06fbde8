import { newId } from "@/lib/core/ids";
import type { StripeCharge } from "@/programs/sandbox/stripe/wire";

/**
 * The charges the /stripe surface knows. A Stripe refund takes its currency
 * and customer from its charge, so the sandbox needs charges to refund;
 * tests and demo runs register them (POST /__sandbox/stripe/charges) as a
 * Stripe test account would have them. In memory only: the refunds made on
 * them are in the journal, the fixtures are the caller's to register again.
 */
export class StripeCharges {
  private readonly byId = new Map<string, StripeCharge>();

  register(input: { id?: string; amount: number; currency: string; customer?: string | null }): StripeCharge {
    const charge: StripeCharge = {
      id: input.id ?? newId("ch"),
      object: "charge",
      amount: input.amount,
      currency: input.currency,
      customer: input.customer ?? null,
      created: Math.floor(Date.now() / 1000),
    };
    this.byId.set(charge.id, charge);
    return charge;
  }

  get(id: string): StripeCharge | undefined {
    return this.byId.get(id);
  }

  clear(): void {
    this.byId.clear();
  }
}
