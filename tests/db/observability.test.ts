import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { context, trace, type Span } from "@opentelemetry/api";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as taskRoute from "@/app/api/v1/tasks/[id]/route";
import * as transitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import * as taskExecutionsRoute from "@/app/api/v1/tasks/[id]/executions/route";
import * as executionRoute from "@/app/api/v1/executions/[id]/route";
import * as sentRoute from "@/app/api/v1/executions/[id]/sent/route";
import * as outcomeRoute from "@/app/api/v1/executions/[id]/outcome/route";
import * as metricsRoute from "@/app/metrics/route";
import { addSseClients, setSseClients } from "@/lib/config/metrics";
import { createLogger } from "@/lib/config/log";
import { flushTracing, inSpan, startTracing, stopTracing } from "@/lib/config/tracing";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import { issueApiToken } from "@/lib/stores/api-tokens";
import { startSandbox, type Sandbox } from "@/programs/sandbox/server";
import { VerityClient, type ToolCallContext, type ToolOutcome } from "@/sdk";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { serveRoutesFrom } from "@/tests/helpers/route-call";
import { serveRouteHandlers } from "@/tests/helpers/route-server";

/**
 * Observability over real HTTP (docs/observability.md): the agent API's
 * route handlers served on a port, the SDK as the agent, the sandbox
 * provider behind a recording pass-through (the only stand-in: it notes each
 * request's headers and forwards it unchanged), and an OTLP/HTTP receiver
 * that the process's tracer provider exports to. One trace runs from the
 * agent's span through the API, the use case and the CAS to the connector's
 * provider call, whose request carries the same trace id; /metrics moves by
 * exactly what was done, and answers only its token.
 */
const METRICS_TOKEN = "metrics-token-for-the-observability-test";

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
}

let t: TestDatabase;
let sandbox: Sandbox;
let agentToken: string;
let api: { url: string; close: () => Promise<void> };
const closers: Array<() => Promise<unknown>> = [];
const providerRequests: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
const exported: ExportedSpan[] = [];

/** OTLP/JSON ids are hex; some encoders send base64: read both. */
function hexId(id: string): string {
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, "base64").toString("hex");
}

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  // Read once by lib/config/env.ts at first use, which is after this.
  process.env.VERITY_METRICS_TOKEN = METRICS_TOKEN;
  sandbox = await startSandbox({ port: 0, allowReset: true });
  closers.push(() => sandbox.close());
  const target = new URL(sandbox.url);
  // The provider's door: every request's headers recorded, then passed to the sandbox as it came.
  const door = createServer((req, res) => {
    providerRequests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  process.env.VERITY_SANDBOX_URL = await listen(door);

  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: ExportedSpan[] }> }>;
      };
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            exported.push({
              ...s,
              traceId: hexId(s.traceId),
              spanId: hexId(s.spanId),
              parentSpanId: s.parentSpanId ? hexId(s.parentSpanId) : "",
            });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  const receiverUrl = await listen(receiver);
  expect(await startTracing({ tracesUrl: `${receiverUrl}/v1/traces`, serviceName: "verity-test" })).toBe(true);
  closers.push(() => stopTracing());

  t = await openTestPglite();
  serveRoutesFrom(t);
  closers.push(async () => {
    serveRoutesFrom(undefined);
    await t.close();
  });
  const everything: AgentScopes = { workflows: "*", tools: "*", take_over_leases: false };
  agentToken = (
    await issueApiToken(
      t.db,
      { name: "trace-bot", identity: "spiffe://verity.local/agent/trace-bot", role: "agent", scopes: everything },
      { identity: "system:test", kind: "system" },
    )
  ).token;
  api = await serveRouteHandlers([
    ["POST", "/api/v1/tasks", tasksRoute.POST],
    ["GET", "/api/v1/tasks/[id]", taskRoute.GET],
    ["POST", "/api/v1/tasks/[id]/transitions", transitionsRoute.POST],
    ["POST", "/api/v1/tasks/[id]/executions", taskExecutionsRoute.POST],
    ["GET", "/api/v1/executions/[id]", executionRoute.GET],
    ["POST", "/api/v1/executions/[id]/sent", sentRoute.POST],
    ["POST", "/api/v1/executions/[id]/outcome", outcomeRoute.POST],
    ["GET", "/metrics", metricsRoute.GET],
  ]);
  closers.push(() => api.close());
});

afterAll(async () => {
  while (closers.length) await closers.pop()?.();
});

const refundRequest = { amount_cents: 1800, currency: "usd", charge_id: "ch_trace", customer_id: "cus_trace" };

/** The agent's own call to the provider, through the same connector the engine uses. */
async function refundCall(ctx: ToolCallContext): Promise<ToolOutcome> {
  const payments = new SandboxPaymentConnector({ baseUrl: process.env.VERITY_SANDBOX_URL ?? "", timeoutMs: 5_000 });
  const out = await payments.refund(
    {
      idempotencyKey: ctx.idempotencyKey,
      amountCents: refundRequest.amount_cents,
      currency: refundRequest.currency,
      chargeId: refundRequest.charge_id,
      customerId: refundRequest.customer_id,
      metadata: { executionId: ctx.executionId, taskId: ctx.taskId },
    },
    { signal: ctx.signal },
  );
  if (out.kind !== "succeeded") throw new Error(`the sandbox refused the refund: ${JSON.stringify(out)}`);
  return { outcome: "succeeded", result: { refund_id: out.refund.id }, evidence: { ...out.evidence } };
}

async function runningTask(verity: VerityClient, intentId: string) {
  let task = await verity.createTask({ workflow: "agent-task", intentId });
  for (const to of ["PLANNING", "READY", "RUNNING"] as const)
    task = (await verity.transition(task.id, { to, expectedVersion: task.version })).task;
  return task;
}

async function scrape(token: string | null = METRICS_TOKEN) {
  const res = await fetch(
    `${api.url}/metrics`,
    token === null ? {} : { headers: { Authorization: `Bearer ${token}` } },
  );
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The value of one sample (`name{labels} value`), 0 when the series is absent. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("traces", () => {
  it("one trace from the agent's span through the API, the use case and the CAS to the provider call, whose request carries its trace id", async () => {
    const verity = new VerityClient({ baseUrl: api.url, token: agentToken, retries: 0 });
    const tracer = trace.getTracer("the-agent");
    let agentSpan!: Span;
    const result = await tracer.startActiveSpan("agent run", async (span) => {
      agentSpan = span;
      try {
        const task = await runningTask(verity, "traced-refund");
        return await verity.executeTool(
          {
            taskId: task.id,
            toolCallId: "refund",
            tool: "payments.refund",
            request: refundRequest,
            expectedVersion: task.version,
          },
          refundCall,
        );
      } finally {
        span.end();
      }
    });
    expect(result.kind).toBe("succeeded");
    const traceId = agentSpan.spanContext().traceId;

    // The provider saw the agent's refund and the engine's confirming lookup (recordOutcome asks the
    // provider before it believes a success), each with a traceparent of this trace.
    const key = result.execution.idempotency_key;
    const seen = providerRequests.filter((r) => decodeURIComponent(r.url).includes(key) || r.method === "POST");
    const lookup = providerRequests.find((r) => r.method === "GET" && decodeURIComponent(r.url).includes(key));
    expect(lookup, JSON.stringify(providerRequests.map((r) => `${r.method} ${r.url}`))).toBeDefined();
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const r of seen) expect(String(r.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    await flushTracing();
    const spans = exported.filter((s) => s.traceId === traceId);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ancestors = (s: ExportedSpan): string[] => {
      const names: string[] = [];
      for (let p = byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) names.push(p.name);
      return names;
    };
    // The lookup's HTTP span, under the connector, under the use case, under the API's server span, under the agent's.
    const lookupSpan = spans.find(
      (s) => s.name === "HTTP GET" && ancestors(s).includes("use-case recordOutcome") && s.kind === 3,
    );
    expect(lookupSpan, spans.map((s) => s.name).join(", ")).toBeDefined();
    expect(ancestors(lookupSpan!)).toEqual([
      "connector lookup",
      "use-case recordOutcome",
      "POST /api/v1/executions/{id}/outcome",
      "agent run",
    ]);
    // The provider's traceparent names that very span as its parent.
    expect(String(lookup!.headers.traceparent).split("-")[2]).toBe(lookupSpan!.spanId);
    // The task's CAS, under its use case, under the transitions route.
    const cas = spans.find((s) => s.name === "task cas" && ancestors(s)[0] === "use-case transitionTask");
    expect(cas && ancestors(cas)).toEqual([
      "use-case transitionTask",
      "POST /api/v1/tasks/{id}/transitions",
      "agent run",
    ]);
    // The intent sends the attempt (executeTool's default): no POST …/sent of its own.
    const apiSpans = spans.filter((s) => s.kind === 2).map((s) => s.name);
    expect(new Set(apiSpans)).toEqual(
      new Set([
        "POST /api/v1/tasks",
        "POST /api/v1/tasks/{id}/transitions",
        "POST /api/v1/tasks/{id}/executions",
        "POST /api/v1/executions/{id}/outcome",
      ]),
    );
  });

  it("the SDK's traceparent option: the server continues that trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const verity = new VerityClient({
      baseUrl: api.url,
      token: agentToken,
      retries: 0,
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    await verity.createTask({ workflow: "agent-task", intentId: "given-traceparent" });
    await flushTracing();
    const server = exported.find((s) => s.traceId === traceId && s.name === "POST /api/v1/tasks");
    expect(server?.parentSpanId).toBe("00f067aa0ba902b7");
    expect(() => new VerityClient({ baseUrl: api.url, token: agentToken, traceparent: "nope" })).toThrow(
      /W3C traceparent/,
    );
  });

  it("a log record written inside a span carries its trace and span ids", async () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", format: "json", out: { write: (l) => lines.push(l) } });
    const ids = await inSpan("logging", {}, async (span) => {
      log.info("inside");
      return span!.spanContext();
    });
    log.info("outside");
    const [inside, outside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ msg: "inside", trace_id: ids.traceId, span_id: ids.spanId });
    expect(outside?.trace_id).toBeUndefined();
    expect(context.active()).toBeDefined();
  });
});

describe("/metrics", () => {
  it("after N transitions and one conflict the counters moved by exactly that", async () => {
    const verity = new VerityClient({ baseUrl: api.url, token: agentToken, retries: 0 });
    const task = await verity.createTask({ workflow: "agent-task", intentId: "counted" });
    const before = (await scrape()).text;
    let version = task.version;
    for (const to of ["PLANNING", "READY", "RUNNING"] as const)
      version = (await verity.transition(task.id, { to, expectedVersion: version })).task.version;
    // A stale write: the version the task had two transitions ago.
    await expect(verity.transition(task.id, { to: "VALIDATING", expectedVersion: version - 2 })).rejects.toMatchObject({
      status: 409,
    });
    const after = (await scrape()).text;
    const moved = (series: string) => sample(after, series) - sample(before, series);
    expect(moved('verity_transitions_total{to_status="PLANNING"}')).toBe(1);
    expect(moved('verity_transitions_total{to_status="READY"}')).toBe(1);
    expect(moved('verity_transitions_total{to_status="RUNNING"}')).toBe(1);
    expect(moved('verity_transitions_total{to_status="VALIDATING"}')).toBe(0);
    expect(moved('verity_cas_conflicts_total{kind="version"}')).toBe(1);
    expect(moved('verity_cas_conflicts_total{kind="fencing"}')).toBe(0);
    expect(
      moved(
        'verity_api_request_duration_seconds_count{method="POST",route="/api/v1/tasks/{id}/transitions",status="409"}',
      ),
    ).toBe(1);
  });

  it("an unknown outcome: counted, and the tenant's gauges read it from the database at scrape time", async () => {
    const verity = new VerityClient({ baseUrl: api.url, token: agentToken, retries: 0 });
    const before = (await scrape()).text;
    expect(sample(before, 'verity_unknown_outcomes{tenant="default"}')).toBe(0);
    expect(before).toContain('verity_review_backlog{tenant="default"} 0');
    const task = await runningTask(verity, "lost-answer");
    const result = await verity.executeTool(
      {
        taskId: task.id,
        toolCallId: "refund",
        tool: "payments.refund",
        request: refundRequest,
        expectedVersion: task.version,
      },
      async () => ({ outcome: "unknown", error: "the provider's answer was lost" }),
    );
    expect(result.kind).toBe("unknown");
    const after = (await scrape()).text;
    const moved = (series: string) => sample(after, series) - sample(before, series);
    expect(moved('verity_effect_outcomes_total{tool="payments.refund",status="OUTCOME_UNKNOWN"}')).toBe(1);
    expect(sample(after, 'verity_unknown_outcomes{tenant="default"}')).toBe(1);
    expect(sample(after, 'verity_oldest_unknown_outcome_age_seconds{tenant="default"}')).toBeGreaterThanOrEqual(0);
    expect(after).toMatch(/^verity_oldest_unknown_outcome_age_seconds\{tenant="default"\} /m);
  });

  it("the SSE gauge is whatever its owner sets", async () => {
    setSseClients(3);
    addSseClients(-1);
    expect(sample((await scrape()).text, "verity_sse_clients")).toBe(2);
    setSseClients(0);
  });

  it("answers only its bearer token: none or a wrong one is a 401 problem+json", async () => {
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const token of [null, "not-the-metrics-token-at-all"]) {
      const refused = await scrape(token);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer realm="verity"/);
      expect(refused.text).not.toContain("verity_transitions_total");
    }
    // An agent's API token is not the scraper's.
    expect((await scrape(agentToken)).status).toBe(401);
  });
});
