import type { IncomingMessage, ServerResponse } from "node:http";
import { apiContentSecurityPolicy, isHttpsRequest, securityHeadersOf } from "@/lib/adapters/http/security-headers";
import { webRequestOf, writeWebResponse } from "@/lib/adapters/http/node-bridge";
import { problemResponse } from "@/lib/adapters/http/problem";

/**
 * The agent API's requests served straight from Node's HTTP server, without
 * Next.js's request pipeline (issue 16, item 3). Next's route layer cost an
 * API transition ~4.6 ms of server CPU against ~0.7 ms for the engine's own
 * work (docs/benchmarks.md, "The API next to the engine"): its router, the
 * proxy, its tracer and the Web request it builds around each request. The
 * handlers are the same functions Next serves (app/api/v1/**\/route.ts, listed
 * in app/api/v1/routes.ts): their auth, limits, problem+json, span and
 * metric are all inside `withProblems` and the handler, so a request answers
 * the same either way; this router adds what proxy.ts adds to an API
 * response (the security headers) and nothing else.
 *
 * It takes only requests that carry `Authorization` (agents, scripts and
 * the SDK): a request without one may be the console's session
 * (lib/adapters/api/session-or-bearer.ts reads it through Next's request
 * context) or a provider's signed webhook, and goes to Next as before. It
 * takes only a path and method some route serves; everything else (HEAD,
 * OPTIONS, a trailing slash Next redirects) goes to Next too.
 */

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type RouteHandler = (
  request: Request,
  context: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response>;

/** A route module's exports: its handlers by method, among other things (`dynamic`). */
export type RouteModule = Partial<Record<Method, unknown>> & Record<string, unknown>;

/** One route: its template as Next's folders spell it (`/api/v1/tasks/[id]/transitions`) and its module. */
export interface ApiRoute {
  template: string;
  module: RouteModule;
}

type Segment = { kind: "static"; value: string } | { kind: "param"; name: string } | { kind: "rest"; name: string };

interface CompiledRoute {
  segments: Segment[];
  handlers: Partial<Record<Method, RouteHandler>>;
}

/** What proxy.ts sets on an API response, over plain HTTP and over HTTPS: built once, not per request. */
const responseHeaders = securityHeadersOf(apiContentSecurityPolicy, false);
const httpsResponseHeaders = securityHeadersOf(apiContentSecurityPolicy, true);

const methods: readonly Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

function compile(route: ApiRoute): CompiledRoute {
  const segments: Segment[] = route.template
    .split("/")
    .filter(Boolean)
    .map((part) => {
      const rest = /^\[\.\.\.(\w+)\]$/.exec(part);
      if (rest) return { kind: "rest", name: rest[1]! };
      const param = /^\[(\w+)\]$/.exec(part);
      if (param) return { kind: "param", name: param[1]! };
      return { kind: "static", value: part };
    });
  const handlers: Partial<Record<Method, RouteHandler>> = {};
  for (const method of methods) {
    const handler = route.module[method];
    if (typeof handler === "function") handlers[method] = handler as RouteHandler;
  }
  return { segments, handlers };
}

/**
 * Next's precedence: at the first segment where two routes differ, a static
 * segment wins over a [param], and a [param] over a [...rest].
 */
function precedence(a: CompiledRoute, b: CompiledRoute): number {
  const rank = { static: 0, param: 1, rest: 2 } as const;
  for (let i = 0; i < Math.max(a.segments.length, b.segments.length); i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (!x || !y) return x ? 1 : -1;
    if (rank[x.kind] !== rank[y.kind]) return rank[x.kind] - rank[y.kind];
  }
  return 0;
}

function match(route: CompiledRoute, parts: readonly string[]): Record<string, string | string[]> | null {
  const params: Record<string, string | string[]> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const segment = route.segments[i]!;
    if (segment.kind === "rest") {
      if (i >= parts.length) return null;
      params[segment.name] = parts.slice(i);
      return params;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (segment.kind === "static") {
      if (part !== segment.value) return null;
    } else params[segment.name] = part;
  }
  return parts.length === route.segments.length ? params : null;
}

/**
 * A path's segments, decoded as Next decodes a route's params; null (Next's
 * to answer) for a path Next would first normalise or redirect: a trailing or
 * doubled slash, a `.` or `..` segment, an escape that does not decode.
 */
function pathSegments(pathname: string): string[] | null {
  const raw = pathname.split("/").slice(1);
  if (raw.some((part) => part === "" || part === "." || part === "..")) return null;
  try {
    return raw.map(decodeURIComponent);
  } catch {
    return null;
  }
}

export interface ApiRouter {
  /** Serves the request and returns true, or returns false without touching it (Next serves it). */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

export function createApiRouter(routes: readonly ApiRoute[], options: { prefix: string }): ApiRouter {
  const compiled = routes.map(compile).sort(precedence);
  return {
    serve(req, res) {
      const url = req.url ?? "/";
      if (!url.startsWith(options.prefix) || req.headers.authorization === undefined) return false;
      const method = req.method as Method;
      if (!methods.includes(method)) return false;
      const query = url.indexOf("?");
      const parts = pathSegments(query === -1 ? url : url.slice(0, query));
      if (!parts) return false;
      for (const route of compiled) {
        const params = match(route, parts);
        if (!params) continue;
        const handler = route.handlers[method];
        if (!handler) return false;
        void answer(req, res, handler, params);
        return true;
      }
      return false;
    },
  };
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  handler: RouteHandler,
  params: Record<string, string | string[]>,
): Promise<void> {
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  let response: Response;
  try {
    const request = await webRequestOf(req, gone.signal);
    response = await handler(request, { params: Promise.resolve(params) });
  } catch (error) {
    // Every route's handler answers its own errors (withProblems): this is a body that could not be read, or a handler without it.
    response = problemResponse(error, { method: req.method ?? "GET", url: `http://localhost${req.url ?? "/"}` });
  }
  const forwardedProto = req.headers["x-forwarded-proto"];
  const https = isHttpsRequest("http://localhost/", typeof forwardedProto === "string" ? forwardedProto : null);
  try {
    await writeWebResponse(res, response, https ? httpsResponseHeaders : responseHeaders);
  } catch (error) {
    // Nothing of the answer can be trusted to have gone out whole: the client sees the connection end.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

const routerKey = Symbol.for("verity.apiRouter");

/** Where scripts/serve.mjs finds the router: built in Next's bundle, read by the plain server around it. */
export function publishApiRouter(router: ApiRouter): void {
  (globalThis as Record<symbol, unknown>)[routerKey] = router;
}
