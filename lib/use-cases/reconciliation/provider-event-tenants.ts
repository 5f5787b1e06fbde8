import type { Db } from "@/lib/db/client";
import { DEFAULT_TENANT_ID } from "@/lib/db/tenant-sessions";
import { tenantsOfExecutions } from "@/lib/stores/execution-store";
import type { ReceiveResult } from "@/lib/stores/messaging";

/**
 * Whose a provider's webhook is. A webhook carries no caller: the provider
 * signs it with the deployment's secret (one provider account, shared by the
 * tenants, as a platform's Stripe account is), and it names the effect by
 * what Verity wrote when it made the call: the execution id in the
 * metadata, the idempotency key. The signature proves the provider sent it
 * and only Verity makes calls in that account, so those names are ours, and
 * they say the tenant. Each tenant named receives the event on its own
 * connection, under row-level security, in its own inbox; an event naming
 * nothing of any tenant's (a refund made by hand in the provider's
 * dashboard) is received by the first tenant, which records it as naming an
 * unknown execution, as before tenants.
 */
export interface ProviderEventReferences {
  executionIds: string[];
  idempotencyKeys: string[];
}

/** What a sandbox `refund.succeeded` event names; nothing when it is not one (its receiver then refuses it by name). */
export function referencesOfSandboxEvent(payload: unknown): ProviderEventReferences {
  return referencesOfRefunds([(payload as { data?: unknown } | null)?.data]);
}

/** What a Stripe refund or charge event names (each refund's metadata, as Verity's calls write it). */
export function referencesOfStripeEvent(payload: unknown): ProviderEventReferences {
  const object = (payload as { data?: { object?: unknown } } | null)?.data?.object as
    { object?: unknown; refunds?: { data?: unknown } } | undefined;
  if (object?.object === "charge")
    return referencesOfRefunds(Array.isArray(object.refunds?.data) ? object.refunds.data : []);
  return referencesOfRefunds([object]);
}

function referencesOfRefunds(refunds: readonly unknown[]): ProviderEventReferences {
  const refs: ProviderEventReferences = { executionIds: [], idempotencyKeys: [] };
  for (const refund of refunds) {
    const r = refund as { metadata?: Record<string, unknown> | null; idempotency_key?: unknown } | null | undefined;
    const executionId = r?.metadata?.execution_id;
    const key = r?.idempotency_key ?? r?.metadata?.idempotency_key;
    if (typeof executionId === "string" && executionId.length <= 255) refs.executionIds.push(executionId);
    if (typeof key === "string" && key.length <= 512) refs.idempotencyKeys.push(key);
  }
  return refs;
}

/** The tenants that receive the event: those whose executions it names, else the first tenant. */
export async function tenantsOfProviderEvent(platformDb: Db, refs: ProviderEventReferences): Promise<string[]> {
  const tenants = await tenantsOfExecutions(platformDb, refs);
  return tenants.length > 0 ? tenants : [DEFAULT_TENANT_ID];
}

/**
 * The event received by each tenant it names, each on its own connection.
 * One tenant (every sandbox event, every refund event): its receipt as it
 * is. A charge whose refunds are several tenants' (which Verity never makes,
 * but a provider account could hold): a duplicate only when every tenant had
 * it, with each tenant's result.
 */
export async function receiveProviderEvent<R>(
  platformDb: Db,
  dbOfTenant: (tenantId: string) => Db,
  refs: ProviderEventReferences,
  receive: (db: Db) => Promise<ReceiveResult<R>>,
): Promise<ReceiveResult<R | { tenants: Record<string, R> }>> {
  const tenants = await tenantsOfProviderEvent(platformDb, refs);
  if (tenants.length === 1) return receive(dbOfTenant(tenants[0]!));
  const results: Record<string, R> = {};
  let duplicate = true;
  for (const tenantId of tenants) {
    const received = await receive(dbOfTenant(tenantId));
    results[tenantId] = received.result;
    duplicate &&= received.duplicate;
  }
  return { duplicate, result: { tenants: results } };
}
