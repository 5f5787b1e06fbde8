/**
 * Next.js calls register() once when a server instance starts, before it
 * serves requests. Verity registers its tracer provider here (when
 * configured) and starts its background loop (reconciliation, divergence
 * checks, outbox delivery), in the Node.js server process only:
 * that process holds the database (the embedded PGlite folder belongs to one
 * process), and the Edge runtime has neither it nor the connectors.
 *
 * NEXT_RUNTIME and NEXT_PHASE are Next's own variables, not configuration:
 * Next inlines NEXT_RUNTIME at build time so the Edge bundle drops the import
 * below, which is why they are read here rather than through lib/config/env.ts.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // `next build` may load server code to prerender pages: no loop there.
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  // Traces first (lib/config/tracing.ts): a no-op unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Once a
  // tracer provider is registered, Next.js's own request spans continue an incoming traceparent too.
  const { startTracing } = await import("@/lib/config/tracing");
  await startTracing();
  const { startServerBackgroundLoop } = await import("@/lib/jobs/background");
  // Not awaited beyond starting: register() must return for the server to accept requests.
  startServerBackgroundLoop();
  // For scripts/serve.mjs: the agent API served without Next's pipeline, by the routes built here.
  const [{ apiRoutes }, { createApiRouter, publishApiRouter }] = await Promise.all([
    import("@/app/api/v1/routes"),
    import("@/lib/adapters/http/api-router"),
  ]);
  publishApiRouter(createApiRouter(apiRoutes, { prefix: "/api/v1/" }));
}
