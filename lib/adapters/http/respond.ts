import { PROBLEM_TYPE_BASE, problemJson, problemResponse } from "@/lib/adapters/http/problem";

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
 * response, so a handler only ever writes the success path.
 */
export function withProblems<A extends unknown[]>(handler: (request: Request, ...rest: A) => Promise<Response>) {
  return async (request: Request, ...rest: A): Promise<Response> => {
    try {
      return await handler(request, ...rest);
    } catch (error) {
      return problemResponse(error, request);
    }
  };
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
