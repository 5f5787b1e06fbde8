import { PROBLEM_TYPE_BASE, problemJson, problemResponse } from "@/lib/adapters/http/problem";
import { observeApiRequest } from "@/lib/config/metrics";
import { inSpan, requestSpanOptions } from "@/lib/config/tracing";

/**
 * Success responses and the error boundary of every route. Agents read
 * authoritative state here, so nothing may be cached on the way:
 * `Cache-Control: no-store` on every response.
 */
export function json(body: unknown, init: { status?: number; headers?: HeadersInit } = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("Content-Type", "application/json");
  headers.set("Cache-Control", "no-store");
  return new Response(JSON.stringify(body), { status: init.status ?? 200, headers });
}

export function notModified(headers: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("Cache-Control", "no-store");
  return new Response(null, { status: 304, headers: h });
}

/**
 * Runs a route handler and turns anything it throws into a problem+json
 * response, so a handler only ever writes the success path. Each request is
 * a server span (continuing the caller's `traceparent`, lib/config/tracing.ts)
 * and one observation of verity_api_request_duration_seconds, both named by
 * the route's template (`/api/v1/tasks/{id}/transitions`), never its ids.
 */
export function withProblems<A extends unknown[]>(handler: (request: Request, ...rest: A) => Promise<Response>) {
  return async (request: Request, ...rest: A): Promise<Response> => {
    const started = performance.now();
    const route = routeTemplate(new URL(request.url).pathname, await paramsOf(rest[0]));
    const response = await inSpan(
      `${request.method} ${route}`,
      { "http.request.method": request.method, "http.route": route },
      async (span) => {
        let answer: Response;
        try {
          answer = await handler(request, ...rest);
        } catch (error) {
          answer = problemResponse(error, request);
        }
        span?.setAttribute("http.response.status_code", answer.status);
        return answer;
      },
      requestSpanOptions(request.headers),
    );
    observeApiRequest(request.method, route, response.status, (performance.now() - started) / 1000);
    return response;
  };
}

/** A route handler's params (Next passes `{ params: Promise<…> }` second), or none. */
async function paramsOf(context: unknown): Promise<Record<string, string | string[]>> {
  const params = (context as { params?: unknown } | null | undefined)?.params;
  if (params === undefined) return {};
  const value = (await params) as unknown;
  return value !== null && typeof value === "object" ? (value as Record<string, string | string[]>) : {};
}

/** The path with each segment that is a param's value put back as `{name}` (a catch-all's segments as one). */
export function routeTemplate(pathname: string, params: Record<string, string | string[]>): string {
  const names = new Map<string, string>();
  for (const [name, value] of Object.entries(params)) {
    if (Array.isArray(value))
      return pathname
        .split("/")
        .slice(0, -value.length || undefined)
        .concat(`{${name}}`)
        .join("/");
    names.set(value, name);
  }
  if (names.size === 0) return pathname;
  return pathname
    .split("/")
    .map((segment) => {
      const name = names.get(safeDecode(segment));
      return name === undefined ? segment : `{${name}}`;
    })
    .join("/");
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const allMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = (typeof allMethods)[number];

/**
 * Handlers for the methods a route does not serve, so that a 405 is a
 * problem+json with `Allow` like every other error (Next's own 405 has no body).
 */
export function otherMethods(allowed: readonly Method[]): Record<Method, (request: Request) => Promise<Response>> {
  const allow = allowed.join(", ");
  const handler = async (request: Request) =>
    problemJson(
      {
        type: `${PROBLEM_TYPE_BASE}method-not-allowed`,
        title: "Method not allowed",
        status: 405,
        detail: `${request.method} is not supported here; use ${allow}.`,
        instance: new URL(request.url).pathname,
      },
      { Allow: allow },
    );
  return Object.fromEntries(allMethods.map((m) => [m, handler])) as Record<Method, typeof handler>;
}
