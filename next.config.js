/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite loads its WebAssembly and data files from its own package folder at
  // run time; bundling it breaks those paths.
  // OpenTelemetry and prom-client keep process-wide state (the tracer
  // provider, the metrics registry): one copy from node_modules, shared by
  // instrumentation.ts and every route, not one per bundle.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "pglite-prisma-adapter",
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-node",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/resources",
    "prom-client",
  ],
  poweredByHeader: false,
  typedRoutes: false,
  // proxy.ts sets the security headers of pages and API responses; built assets skip it.
  async headers() {
    return [{ source: "/_next/static/:path*", headers: [{ key: "X-Content-Type-Options", value: "nosniff" }] }];
  },
};

export default nextConfig;
