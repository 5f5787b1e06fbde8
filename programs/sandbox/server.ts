/**
 * The sandbox external system: a real HTTP server playing a Stripe-like
 * payment provider (refunds) and a CRM (customer notes) for the demo agent,
 * the chaos tests and `npm start`. It behaves like a provider, failures
 * included: idempotency keys, webhooks that arrive twice, and faults around
 * the commit (programs/sandbox/faults.ts) that leave the client not knowing what
 * happened.
 *
 * ## HTTP contract
 *
 *   POST /v1/refunds                       Idempotency-Key required
 *        {amount_cents, currency, charge_id, customer_id, metadata?}
 *        200 refund · 200 + Idempotent-Replayed: true (same key, same params)
 *        400 parameter_invalid | idempotency_key_missing (never stored)
 *        409 idempotency_key_reused (other params) | idempotency_key_in_use (still running)
 *        413, 415 · 500 internal_error (state unknown) · 503 not_processed (nothing stored)
 *   GET  /v1/refunds?idempotency_key=K     200 {data: [refund] | [], in_flight}
 *   GET  /v1/refunds                       200 {data: [every refund, oldest first]}
 *   GET  /v1/refunds/:id                   200 refund · 404 resource_missing
 *   POST /v1/crm/customers/:id/notes       Idempotency-Key required, {text, metadata?}; as refunds
 *   GET  /v1/crm/customers/:id/notes       200 {data: [note]}
 *   GET  /v1/crm/notes?idempotency_key=K   200 {data: [note] | [], in_flight}
 *   POST /v1/releases                      Idempotency-Key required, {service, version, environment, commit, metadata?}; as refunds
 *   GET  /v1/releases?idempotency_key=K    200 {data: [release] | [], in_flight} (without the key: every release)
 *   POST /v1/rollbacks                     Idempotency-Key required, the release's {service, version, environment, commit}; 400 release_not_deployed
 *   GET  /v1/rollbacks?idempotency_key=K   as releases
 *   GET  /__sandbox/stats                  counts, duplicates prevented, webhook and consistency figures
 *   GET|POST /__sandbox/faults             {faults: [...], probability?, seed?, scope?: "writes" | "all"}
 *   POST /__sandbox/reset                  403 reset_disabled unless started with allowReset
 *   GET  /__sandbox/health                 200 {ok: true}
 *   POST /__sandbox/held/release           {idempotency_key?}: writes held by a latency fault go on now
 *
 *   /stripe/v1/…: the subset of Stripe's API that lib/connectors/stripe uses,
 *   on the same store (programs/sandbox/routes/stripe.ts):
 *   POST /stripe/v1/refunds                form-encoded {charge, amount?, reason?, metadata[k]}
 *        400 idempotency_error (key reused with other params) · 402, 429 (X-Sandbox-Stripe-Error)
 *   GET  /stripe/v1/refunds[?charge=&limit=&starting_after=]   Stripe's list, newest first
 *   GET  /stripe/v1/refunds/:id · GET /stripe/v1/charges/:id
 *   POST /__sandbox/stripe/charges         {id?, amount, currency, customer?}: a charge to refund
 *
 * Request headers: Idempotency-Key, X-Sandbox-Fault (per-request faults,
 * replacing the global ones), X-Sandbox-Webhook-Url (where this refund's
 * event goes). Every response has Request-Id. Errors are
 * `{error: {type, code, message, param?}}` with the codes of contract.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { newId } from "@/lib/core/ids";
import { childLogger, lineLogger, type Logger } from "@/lib/config/log";
import { HEADER } from "@/lib/connectors/sandbox/contract";
import { newCounters, type RequestContext, type SandboxContext } from "@/programs/sandbox/context";
import { HeldRequests } from "@/programs/sandbox/held-requests";
import {
  FaultSyntaxError,
  GlobalFaults,
  noFaults,
  planFromHeader,
  type FaultPlan,
  type GlobalFaultConfigInput,
} from "@/programs/sandbox/faults";
import { headerOf, invalidParameter, sendError, SandboxHttpError } from "@/programs/sandbox/http";
import { deliver, internalError, notProcessed } from "@/programs/sandbox/mutation";
import { routes, type Method } from "@/programs/sandbox/routes";
import { sleep } from "@/lib/core/sleep";
import { SandboxStore } from "@/programs/sandbox/store";
import { StripeCharges } from "@/programs/sandbox/stripe/charges";
import { WebhookSender } from "@/programs/sandbox/webhooks";

export interface SandboxOptions {
  /** 0 picks a free port (tests). */
  port?: number;
  host?: string;
  /** JSON Lines journal; omitted, state lives in memory and dies with the process. */
  journalPath?: string;
  /** Where refund.succeeded events go when a request names no X-Sandbox-Webhook-Url. */
  webhookUrl?: string;
  /** Signs webhook deliveries (Sandbox-Signature) when set. */
  webhookSecret?: string;
  /** Where the /stripe surface's events (charge.refunded, refund.updated) go. */
  stripeWebhookUrl?: string;
  /** Signs them with Stripe's scheme (Stripe-Signature): Verity's STRIPE_WEBHOOK_SECRET. */
  stripeWebhookSecret?: string;
  webhookDelivery?: { attempts?: number; baseDelayMs?: number; timeoutMs?: number };
  /** Enables POST /__sandbox/reset: tests only. */
  allowReset?: boolean;
  /** Global faults from the start (a chaos run); POST /__sandbox/faults changes them. */
  faults?: GlobalFaultConfigInput;
  maxBodyBytes?: number;
  /**
   * Where the sandbox logs: each request at debug (VERITY_LOG_LEVEL=debug
   * shows them; an idle console's reconciler asks about every settled refund
   * each minute, so at info they would bury everything else), unexpected
   * errors at error. `childLogger("sandbox")` when omitted.
   */
  logger?: Logger;
  /** Instead of `logger`: the same records as plain lines, only those at or above VERITY_LOG_LEVEL (a caller that prefixes them itself). */
  log?: (line: string) => void;
}

export interface Sandbox {
  url: string;
  port: number;
  /** Resolves when no webhook delivery is pending (tests wait on it instead of sleeping). */
  webhooksIdle(): Promise<void>;
  /** Stops listening, cuts open (and hanging) connections, ends deliveries, closes the journal. */
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const store = await SandboxStore.open(options.journalPath);
  const lifetime = new AbortController();
  const faults = new GlobalFaults();
  if (options.faults) faults.configure(options.faults);
  const webhooks = new WebhookSender({
    secret: options.webhookSecret,
    ...options.webhookDelivery,
    signal: lifetime.signal,
  });
  const ctx: SandboxContext = {
    store,
    faults,
    webhooks,
    counters: newCounters(),
    lifetime: lifetime.signal,
    held: new HeldRequests(),
    webhookUrl: options.webhookUrl,
    allowReset: options.allowReset ?? false,
    maxBodyBytes: options.maxBodyBytes ?? 65_536,
    log: options.logger ?? (options.log ? lineLogger(options.log) : childLogger("sandbox")),
    stripe: {
      charges: new StripeCharges(),
      webhookUrl: options.stripeWebhookUrl,
      webhookSecret: options.stripeWebhookSecret,
    },
  };

  const server = createServer((req, res) => void handle(ctx, req, res));
  try {
    await listen(server, options.port ?? 0, options.host ?? "127.0.0.1");
  } catch (error) {
    await store.close();
    throw error;
  }
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    webhooksIdle: () => webhooks.idle(),
    close: () =>
      (closing ??= (async () => {
        lifetime.abort();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Hanging responses (timeout_after_commit) and keep-alive sockets would hold close() forever.
        server.closeAllConnections();
        await closed;
        await webhooks.idle();
        await store.close();
      })()),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function handle(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  res.setHeader(HEADER.requestId, newId("req"));
  const url = new URL(req.url ?? "/", "http://sandbox.invalid");
  let plan: FaultPlan = noFaults;
  res.on("close", () => {
    const status = res.writableFinished ? String(res.statusCode) : "no response";
    const faultNote = plan === noFaults ? "" : ` [${describePlan(plan)}]`;
    if (ctx.log.isLevelEnabled("debug"))
      ctx.log.debug(
        `${req.method} ${url.pathname}${url.search} → ${status}${faultNote} ${Math.round(performance.now() - started)} ms`,
      );
  });

  try {
    const match = matchRoute(url.pathname);
    if (!match)
      throw new SandboxHttpError(
        404,
        "invalid_request_error",
        "resource_missing",
        `Unrecognized request URL (${req.method} ${url.pathname}).`,
      );
    const handler = match.route.methods[req.method as Method];
    if (!handler) {
      const allow = Object.keys(match.route.methods).join(", ");
      return sendError(
        res,
        new SandboxHttpError(
          405,
          "invalid_request_error",
          "method_not_allowed",
          `${req.method} is not supported here; use ${allow}.`,
        ),
        { Allow: allow },
      );
    }
    const rc: RequestContext = { req, res, url, plan };
    if (!match.route.isAdmin) {
      ctx.counters.requests++;
      rc.plan = plan = planFor(ctx, req);
      countFaults(ctx, plan);
      if (req.method === "GET" && !(await passReadFaults(ctx, rc))) return;
    }
    await handler(ctx, rc, ...match.params);
  } catch (error) {
    if (error instanceof SandboxHttpError) return sendError(res, error);
    ctx.log.error({ err: error, method: req.method, path: url.pathname }, "unexpected error");
    sendError(res, internalError());
  }
}

function matchRoute(pathname: string): { route: (typeof routes)[number]; params: string[] } | null {
  for (const route of routes) {
    const m = route.pattern.exec(pathname);
    if (!m) continue;
    try {
      return { route, params: m.slice(1).map((p) => decodeURIComponent(p ?? "")) };
    } catch {
      throw invalidParameter("The path is not valid percent-encoding.");
    }
  }
  return null;
}

/** The request's header names its faults exactly; without one, the global faults draw. */
function planFor(ctx: SandboxContext, req: IncomingMessage): FaultPlan {
  const header = headerOf(req, HEADER.fault);
  if (header === undefined) return ctx.faults.draw(req.method === "POST");
  try {
    return planFromHeader(header);
  } catch (error) {
    if (error instanceof FaultSyntaxError) throw invalidParameter(error.message, HEADER.fault);
    throw error;
  }
}

function countFaults(ctx: SandboxContext, plan: FaultPlan): void {
  const bump = (name: string) => (ctx.counters.faults[name] = (ctx.counters.faults[name] ?? 0) + 1);
  if (plan.latencyMs > 0) bump("latency");
  if (plan.outcome) bump(plan.outcome);
  if (plan.duplicateWebhook) bump("duplicate_webhook");
}

function describePlan(plan: FaultPlan): string {
  return [
    plan.latencyMs > 0 ? `latency=${plan.latencyMs}` : null,
    plan.outcome,
    plan.duplicateWebhook ? "duplicate_webhook" : null,
  ]
    .filter(Boolean)
    .join(",");
}

/**
 * Faults on a read. Nothing is committed by a read, so the outcome faults
 * are about the answer only; the handler runs only when none applies.
 */
async function passReadFaults(ctx: SandboxContext, rc: RequestContext): Promise<boolean> {
  if (!(await sleep(rc.plan.latencyMs, ctx.lifetime))) {
    rc.res.destroy();
    return false;
  }
  if (rc.plan.outcome === null) return true;
  if (rc.plan.outcome === "error_before_commit")
    sendError(rc.res, notProcessed("The request was not processed (injected error_before_commit)."));
  else deliver(rc, 500, null);
  return false;
}
