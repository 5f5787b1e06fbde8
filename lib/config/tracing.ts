import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { getEnv } from "@/lib/config/env";

/**
 * OpenTelemetry traces (docs/observability.md): an agent's request through
 * the API, the use case, the task store's CAS and the connector's provider
 * call, one trace, continued from the caller's `traceparent` and passed on
 * to the provider in its own.
 *
 * Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set:
 * then no tracer provider is registered, the SDK is never loaded, and
 * `inSpan` is one boolean test before it calls its function, so the hot
 * path (bench:transitions) pays nothing measurable.
 *
 * The flag and the provider live on globalThis: Next.js loads
 * instrumentation.ts and the route bundles as separate module instances in
 * one process, and the provider registered by the first must be seen by the
 * second. (@opentelemetry/api keeps its own globals the same way.)
 */

interface TracingState {
  provider?: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
}

const stateKey = Symbol.for("verity.tracing");
const state: TracingState = ((globalThis as Record<symbol, unknown>)[stateKey] ??= {}) as TracingState;

export interface TracingOptions {
  /** OTLP/HTTP traces URL; default from the environment (see above). */
  tracesUrl?: string;
  serviceName?: string;
  /** Batch delay in ms; default OTEL_BSP_SCHEDULE_DELAY (5 s). */
  scheduledDelayMs?: number;
}

/** Where spans go, or undefined when tracing is off. The OTLP rule: the generic endpoint gets /v1/traces appended. */
export function configuredTracesUrl(): string | undefined {
  const env = getEnv();
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`;
}

/**
 * Registers the tracer provider (W3C trace context, AsyncLocalStorage,
 * batched OTLP/HTTP export) once per process. False, and nothing loaded,
 * when no endpoint is configured.
 */
export async function startTracing(options: TracingOptions = {}): Promise<boolean> {
  if (state.provider) return true;
  const url = options.tracesUrl ?? configuredTracesUrl();
  if (!url) return false;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const env = getEnv();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName ?? env.OTEL_SERVICE_NAME }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url }), {
        scheduledDelayMillis: options.scheduledDelayMs ?? env.OTEL_BSP_SCHEDULE_DELAY,
      }),
    ],
  });
  provider.register();
  state.provider = provider;
  return true;
}

/** Sends what is batched (tests, a process about to exit). */
export async function flushTracing(): Promise<void> {
  await state.provider?.forceFlush();
}

/** Flushes, then unregisters everything startTracing registered: tracing is off again. */
export async function stopTracing(): Promise<void> {
  const provider = state.provider;
  if (!provider) return;
  state.provider = undefined;
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

export { SpanKind };

/**
 * Runs `fn` inside a span named `name`, a child of the active one (or of
 * `options.parent`); a thrown error marks the span failed (its AppError
 * code, when it has one, as `verity.error_code`) and is rethrown. With
 * tracing off, just `fn(undefined)`.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; parent?: Context } = {},
): Promise<T> {
  if (!state.provider) return fn(undefined);
  const tracer = trace.getTracer("verity");
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await fn(span);
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === "string") span.setAttribute("verity.error_code", code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * How a request's own span starts: as the server span continuing the
 * caller's `traceparent`, or, when Next.js has already started the server
 * span (and continued it), as an internal span under it.
 */
export function requestSpanOptions(headers: Headers): { kind: SpanKind; parent?: Context } {
  const parent = incomingContext(headers);
  if (parent) return { kind: SpanKind.SERVER, parent };
  return { kind: state.provider && trace.getSpanContext(context.active()) ? SpanKind.INTERNAL : SpanKind.SERVER };
}

/**
 * The trace context an incoming request carries (its `traceparent` and
 * `tracestate`), unless a span is already active: Next.js's own server span
 * has continued it then, and ours nest under that.
 */
function incomingContext(headers: Headers): Context | undefined {
  if (!state.provider) return undefined;
  if (trace.getSpanContext(context.active())) return undefined;
  return propagation.extract(ROOT_CONTEXT, headers, {
    keys: (carrier) => [...carrier.keys()],
    get: (carrier, key) => carrier.get(key) ?? undefined,
  });
}

/** `headers` with the active span's `traceparent` (and `tracestate`) added: every call to a provider carries them. */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (!state.provider) return headers;
  const out = { ...headers };
  propagation.inject(context.active(), out);
  return out;
}

/** The active span's ids, for a log record (lib/config/log.ts); undefined when none or tracing is off. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!state.provider) return undefined;
  const sc = trace.getSpanContext(context.active());
  return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : undefined;
}
