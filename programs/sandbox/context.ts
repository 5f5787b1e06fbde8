import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "@/lib/config/log";
import type { FaultPlan, GlobalFaults } from "@/programs/sandbox/faults";
import type { SandboxStore } from "@/programs/sandbox/store";
import type { WebhookSender } from "@/programs/sandbox/webhooks";
import type { StripeCharges } from "@/programs/sandbox/stripe/charges";
import type { HeldRequests } from "@/programs/sandbox/held-requests";

/** What every route handler gets: the sandbox's parts, built once in server.ts. */
export interface SandboxContext {
  store: SandboxStore;
  faults: GlobalFaults;
  webhooks: WebhookSender;
  counters: SandboxCounters;
  /** Aborted by close(): waits end early and nothing new is committed. */
  lifetime: AbortSignal;
  /** Writes held by a latency fault, which the harness may end early (POST /__sandbox/held/release). */
  held: HeldRequests;
  webhookUrl: string | undefined;
  allowReset: boolean;
  maxBodyBytes: number;
  log: Logger;
  /** The /stripe surface's own parts: its charges, and where its Stripe-signed events go. */
  stripe: StripeSurface;
}

export interface StripeSurface {
  charges: StripeCharges;
  webhookUrl: string | undefined;
  /** Signs the events (Stripe-Signature) when set; Verity's STRIPE_WEBHOOK_SECRET. */
  webhookSecret: string | undefined;
}

/** One request: its faults are decided before the handler runs. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  plan: FaultPlan;
}

export interface SandboxCounters {
  /** Requests to /v1/… (the admin endpoints are not counted). */
  requests: number;
  /** Same key, same parameters: the stored response was returned instead of a second effect. */
  replays: number;
  /** Same key while the first request was still running: refused with 409. */
  inFlightConflicts: number;
  /** Same key, other parameters: refused with 409. */
  keyMismatches: number;
  /** Injected faults by name. */
  faults: Record<string, number>;
}

export function newCounters(): SandboxCounters {
  return { requests: 0, replays: 0, inFlightConflicts: 0, keyMismatches: 0, faults: {} };
}
