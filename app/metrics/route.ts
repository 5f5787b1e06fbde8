import { serveMetrics } from "@/lib/adapters/metrics/metrics-endpoint";

export const dynamic = "force-dynamic";

/** Prometheus's scrape: bearer VERITY_METRICS_TOKEN, 404 when it is unset (lib/adapters/metrics/metrics-endpoint.ts). */
export const GET = serveMetrics;
