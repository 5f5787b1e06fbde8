/**
 * One HTTP request to a provider, reduced to what a connector can know:
 * a complete response, a request that provably never left, or a request that
 * may have arrived but whose answer was lost. The timeout covers reading the
 * whole body, not just the headers: a 200 whose body never arrives proves
 * nothing.
 *
 * Each exchange is a client span (lib/config/tracing.ts) whose `traceparent`
 * the request carries, so the provider's side joins the caller's trace.
 */
import { inSpan, SpanKind, withTraceHeaders } from "@/lib/config/tracing";

export type HttpExchange =
  | { kind: "response"; status: number; headers: Headers; text: string; json: unknown; receivedAt: Date }
  | { kind: "not_sent"; reason: "unreachable" | "cancelled"; message: string }
  | { kind: "lost"; reason: "timeout" | "connection_lost" | "aborted"; message: string };

export interface ExchangeRequest {
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: unknown;
  /** The exact bytes of a JSON body, when the caller signed them (a signature covers bytes, not values). */
  rawBody?: string;
}

/**
 * Errors that prove the request never reached the server: nothing was
 * connected or resolved. A reset on an open (possibly reused) connection is
 * not one of them; the request may have been read before it broke.
 */
const neverSentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

function isNeverSent(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause as { code?: unknown; errors?: unknown } | undefined;
  if (!cause) return false;
  if (typeof cause.code === "string" && neverSentCodes.has(cause.code)) return true;
  // Happy-eyeballs connects report an AggregateError of every address tried.
  return (
    Array.isArray(cause.errors) &&
    cause.errors.length > 0 &&
    cause.errors.every((e) => neverSentCodes.has((e as { code?: string }).code ?? ""))
  );
}

function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const base = error instanceof Error ? error.message : String(error);
  return cause instanceof Error ? `${base}: ${cause.message}` : base;
}

export function exchange(
  request: ExchangeRequest,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<HttpExchange> {
  return inSpan(
    `HTTP ${request.method}`,
    { "http.request.method": request.method, "url.full": originAndPath(request.url) },
    async (span) => {
      const ex = await exchangeOnce(request, options);
      span?.setAttribute("verity.exchange", ex.kind === "response" ? "response" : `${ex.kind}:${ex.reason}`);
      if (ex.kind === "response") span?.setAttribute("http.response.status_code", ex.status);
      return ex;
    },
    { kind: SpanKind.CLIENT },
  );
}

/** A span's URL: no query (keys, filters) and no credentials (URL.origin leaves out user and password). */
function originAndPath(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(not a URL)";
  }
}

async function exchangeOnce(
  request: ExchangeRequest,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<HttpExchange> {
  if (options.signal?.aborted)
    return { kind: "not_sent", reason: "cancelled", message: "cancelled before the request was sent" };
  const controller = new AbortController();
  let abortedBy: "timeout" | "caller" | null = null;
  const timer = setTimeout(() => {
    abortedBy ??= "timeout";
    controller.abort();
  }, options.timeoutMs);
  const onCallerAbort = () => {
    abortedBy ??= "caller";
    controller.abort();
  };
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  try {
    const headers = withTraceHeaders({ Accept: "application/json", ...request.headers });
    const body = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(request.url, {
      method: request.method,
      headers,
      body,
      signal: controller.signal,
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { kind: "response", status: res.status, headers: res.headers, text, json, receivedAt: new Date() };
  } catch (error) {
    if (abortedBy === "timeout")
      return { kind: "lost", reason: "timeout", message: `no complete answer within ${options.timeoutMs} ms` };
    if (abortedBy === "caller")
      return {
        kind: "lost",
        reason: "aborted",
        message: "cancelled by the caller after the request may have been sent",
      };
    if (isNeverSent(error)) return { kind: "not_sent", reason: "unreachable", message: describe(error) };
    return { kind: "lost", reason: "connection_lost", message: describe(error) };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onCallerAbort);
  }
}
