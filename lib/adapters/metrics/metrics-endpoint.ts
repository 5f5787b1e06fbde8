import { timingSafeEqual } from "node:crypto";
import { bearerTokenOf } from "@/lib/adapters/http/bearer";
import { problemResponse } from "@/lib/adapters/http/problem";
import { getEnv } from "@/lib/config/env";
import { AppError } from "@/lib/core/errors";
import { getPlatformDb } from "@/lib/db/client";
import { scrapeMetrics } from "@/lib/use-cases/metrics/scrape-metrics";

/**
 * GET /metrics for Prometheus (docs/observability.md). The scrape is
 * platform-wide: every tenant's gauges, labelled by tenant. So it answers
 * only the scraper holding VERITY_METRICS_TOKEN, never a tenant's agent or
 * person; without that setting it does not exist (404, the same answer as
 * any path nobody serves), and a missing or wrong token is a 401
 * problem+json saying so, with WWW-Authenticate. The token is compared in
 * constant time.
 */
export async function serveMetrics(request: Request): Promise<Response> {
  try {
    const expected = getEnv().VERITY_METRICS_TOKEN;
    if (expected === undefined)
      throw new AppError("not_found", "No endpoint GET /metrics: set VERITY_METRICS_TOKEN to turn it on.");
    if (!sameToken(bearerTokenOf(request.headers.get("authorization")), expected))
      throw new AppError(
        "unauthenticated",
        "The metrics token is not the one this server was given (VERITY_METRICS_TOKEN).",
        {
          bearerError: "invalid_token",
        },
      );
    const { contentType, body } = await scrapeMetrics(getPlatformDb());
    return new Response(body, { status: 200, headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
  } catch (error) {
    return problemResponse(error, request);
  }
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
