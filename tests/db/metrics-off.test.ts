import { describe, expect, it } from "vitest";
import * as metricsRoute from "@/app/metrics/route";
import { serveRouteHandlers } from "@/tests/helpers/route-server";

/**
 * Without VERITY_METRICS_TOKEN, /metrics does not exist: the platform-wide
 * scrape is never open to whoever asks (docs/observability.md). Its own file:
 * the configuration is read once per process.
 */
describe("/metrics without VERITY_METRICS_TOKEN", () => {
  it("is a 404 problem, whatever token is sent", async () => {
    delete process.env.VERITY_METRICS_TOKEN;
    const api = await serveRouteHandlers([["GET", "/metrics", metricsRoute.GET]]);
    try {
      for (const headers of [{}, { Authorization: "Bearer some-token-anyone-could-send" }] as Array<
        Record<string, string>
      >) {
        const res = await fetch(`${api.url}/metrics`, { headers });
        expect(res.status).toBe(404);
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(await res.text()).toContain("VERITY_METRICS_TOKEN");
      }
    } finally {
      await api.close();
    }
  });
});
