import type { Db } from "@/lib/db/client";
import { metricsRegistry, setTenantFacts, type TenantFacts } from "@/lib/config/metrics";

/**
 * One Prometheus scrape (GET /metrics, docs/observability.md): the in-process
 * counters as they stand, and the gauges that are database facts read now,
 * per tenant, on the platform's connection (the owner's, which row-level
 * security does not hold: one query per fact across every tenant instead of
 * one per tenant). Each query is bounded: it reads one status through the
 * index on (status, …) and returns one row per tenant.
 */
export async function scrapeMetrics(platformDb: Db): Promise<{ contentType: string; body: string }> {
  const [tenants, reviews, unknown] = await Promise.all([
    platformDb.$queryRaw<Array<{ id: string }>>`SELECT id FROM tenants WHERE status <> 'deleted' ORDER BY id`,
    platformDb.$queryRaw<Array<{ tenant_id: string; n: number }>>`
      SELECT tenant_id, count(*)::int AS n FROM reviews WHERE status = 'OPEN' GROUP BY tenant_id`,
    platformDb.$queryRaw<Array<{ tenant_id: string; n: number; oldest_seconds: number }>>`
      SELECT tenant_id, count(*)::int AS n,
             EXTRACT(EPOCH FROM (now() - min(updated_at)))::float8 AS oldest_seconds
        FROM executions WHERE status = 'OUTCOME_UNKNOWN' GROUP BY tenant_id`,
  ]);
  const facts = new Map<string, TenantFacts>();
  const factsOf = (tenant: string) => {
    let f = facts.get(tenant);
    if (!f) facts.set(tenant, (f = { tenant, reviewBacklog: 0, unknownOutcomes: 0, oldestUnknownAgeSeconds: 0 }));
    return f;
  };
  // Every live tenant gets its zeros: an alert on "backlog > 0" needs the series to exist before it moves.
  for (const t of tenants) factsOf(t.id);
  for (const r of reviews) factsOf(r.tenant_id).reviewBacklog = r.n;
  for (const u of unknown) {
    const f = factsOf(u.tenant_id);
    f.unknownOutcomes = u.n;
    f.oldestUnknownAgeSeconds = Math.max(0, u.oldest_seconds);
  }
  setTenantFacts([...facts.values()]);
  const registry = metricsRegistry();
  return { contentType: registry.contentType, body: await registry.metrics() };
}
