import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's Prometheus metrics (docs/observability.md), served by GET
 * /metrics (app/metrics/route.ts). Counters move in process where the event
 * happens (the task CAS, the execution store, the monitor, the background
 * loop, the API's error boundary); the gauges that are database facts
 * (review backlog, unknown outcomes) are read at scrape time by
 * lib/use-cases/metrics/scrape-metrics.ts.
 *
 * Held on globalThis: Next.js loads instrumentation.ts (the background loop)
 * and the route bundles as separate module instances of this file in one
 * process, and both must count into the one registry /metrics serves.
 */
function createMetrics() {
  const registry = new Registry();
  const reconciled: { lastPassAt?: number } = {};
  return {
    registry,
    reconciled,
    defaultsCollected: false,
    transitions: new Counter({
      name: "verity_transitions_total",
      help: "Task writes committed through the CAS (a transition row each), by the status written.",
      labelNames: ["to_status"] as const,
      registers: [registry],
    }),
    casConflicts: new Counter({
      name: "verity_cas_conflicts_total",
      help: "Task writes refused by the CAS: version (someone else wrote first) or fencing (the lease refused the writer).",
      labelNames: ["kind"] as const,
      registers: [registry],
    }),
    effectOutcomes: new Counter({
      name: "verity_effect_outcomes_total",
      help: "Executions moved to an outcome status (SUCCEEDED, FAILED, OUTCOME_UNKNOWN, RECONCILED_*, NEEDS_HUMAN, CANCELLED), by tool.",
      labelNames: ["tool", "status"] as const,
      registers: [registry],
    }),
    monitorViolations: new Counter({
      name: "verity_monitor_violations_total",
      help: "Violations the invariant monitor found, by check.",
      labelNames: ["check"] as const,
      registers: [registry],
    }),
    reconcilePasses: new Counter({
      name: "verity_reconcile_passes_total",
      help: "The background loop's reconcile passes, by result (ok: it ran to the end; error: it threw).",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
    reconcileLastPass: new Gauge({
      name: "verity_reconcile_last_pass_timestamp_seconds",
      help: "When this process's reconciler last finished a pass (Unix time); absent before its first.",
      registers: [registry],
    }),
    reconcileLag: new Gauge({
      name: "verity_reconcile_lag_seconds",
      help: "Seconds since this process's reconciler last finished a pass, at scrape time; absent before its first.",
      registers: [registry],
      collect() {
        if (reconciled.lastPassAt !== undefined) this.set(Date.now() / 1000 - reconciled.lastPassAt);
      },
    }),
    reviewBacklog: new Gauge({
      name: "verity_review_backlog",
      help: "Open reviews waiting on people, per tenant (read from the database at scrape time).",
      labelNames: ["tenant"] as const,
      registers: [registry],
    }),
    unknownOutcomes: new Gauge({
      name: "verity_unknown_outcomes",
      help: "Executions whose outcome is unknown (OUTCOME_UNKNOWN), per tenant (read at scrape time).",
      labelNames: ["tenant"] as const,
      registers: [registry],
    }),
    oldestUnknownOutcome: new Gauge({
      name: "verity_oldest_unknown_outcome_age_seconds",
      help: "Age of the oldest unknown outcome since it became unknown, per tenant; 0 when there is none (read at scrape time).",
      labelNames: ["tenant"] as const,
      registers: [registry],
    }),
    sseClients: new Gauge({
      name: "verity_sse_clients",
      help: "Console clients connected to live updates (server-sent events) on this process.",
      registers: [registry],
    }),
    apiRequests: new Histogram({
      name: "verity_api_request_duration_seconds",
      help: "Agent API and console JSON requests, by method, route template and status.",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

type Metrics = ReturnType<typeof createMetrics>;
const metricsKey = Symbol.for("verity.metrics");
const metrics: Metrics = ((globalThis as Record<symbol, unknown>)[metricsKey] ??= createMetrics()) as Metrics;

/** The registry /metrics serves, with Node's process metrics (CPU, memory, event loop lag) added on first use. */
export function metricsRegistry(): Registry {
  if (!metrics.defaultsCollected) {
    metrics.defaultsCollected = true;
    collectDefaultMetrics({ register: metrics.registry, prefix: "verity_process_" });
  }
  return metrics.registry;
}

export function countTransition(toStatus: string): void {
  metrics.transitions.inc({ to_status: toStatus });
}

export function countCasConflict(kind: "version" | "fencing"): void {
  metrics.casConflicts.inc({ kind });
}

export function countEffectOutcome(tool: string, status: string): void {
  metrics.effectOutcomes.inc({ tool, status });
}

export function countMonitorViolations(check: string, n: number): void {
  if (n > 0) metrics.monitorViolations.inc({ check }, n);
}

export function recordReconcilePass(result: "ok" | "error", at = new Date()): void {
  metrics.reconcilePasses.inc({ result });
  if (result !== "ok") return;
  metrics.reconciled.lastPassAt = at.getTime() / 1000;
  metrics.reconcileLastPass.set(metrics.reconciled.lastPassAt);
}

/**
 * The live-updates (SSE) connection count: the stream's owner sets it as
 * clients come and go (`addSseClients(1)` on open, `addSseClients(-1)` on
 * close), or to a count it keeps itself.
 */
export function setSseClients(count: number): void {
  metrics.sseClients.set(count);
}

export function addSseClients(delta: number): void {
  metrics.sseClients.inc(delta);
}

export function observeApiRequest(method: string, route: string, status: number, seconds: number): void {
  metrics.apiRequests.observe({ method, route, status: String(status) }, seconds);
}

/** The database's facts, one row per tenant, as of one scrape (lib/use-cases/metrics/scrape-metrics.ts). */
export interface TenantFacts {
  tenant: string;
  reviewBacklog: number;
  unknownOutcomes: number;
  oldestUnknownAgeSeconds: number;
}

/** Replaces the per-tenant gauges with this scrape's facts: a tenant gone from the list is gone from the output. */
export function setTenantFacts(facts: readonly TenantFacts[]): void {
  metrics.reviewBacklog.reset();
  metrics.unknownOutcomes.reset();
  metrics.oldestUnknownOutcome.reset();
  for (const f of facts) {
    metrics.reviewBacklog.set({ tenant: f.tenant }, f.reviewBacklog);
    metrics.unknownOutcomes.set({ tenant: f.tenant }, f.unknownOutcomes);
    metrics.oldestUnknownOutcome.set({ tenant: f.tenant }, f.oldestUnknownAgeSeconds);
  }
}
