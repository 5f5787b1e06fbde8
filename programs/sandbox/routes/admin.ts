import { z } from "zod";
import { findDuplicateRefunds } from "@/lib/connectors/sandbox/duplicate-refunds";
import type { RequestContext, SandboxContext } from "@/programs/sandbox/context";
import { FaultSyntaxError, globalFaultConfigSchema } from "@/programs/sandbox/faults";
import { fromZodIssues, invalidParameter, readJsonBody, sendJson, SandboxHttpError } from "@/programs/sandbox/http";
import { newCounters } from "@/programs/sandbox/context";

/** /__sandbox/…: the test harness's controls. Never subject to faults. */

export async function getStats(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const c = ctx.counters;
  const duplicates = findDuplicateRefunds(ctx.store.listRefunds());
  sendJson(rc.res, 200, {
    requests: c.requests,
    ...ctx.store.counts(),
    duplicates_prevented: c.replays + c.inFlightConflicts,
    replays: c.replays,
    in_flight_conflicts: c.inFlightConflicts,
    idempotency_mismatches: c.keyMismatches,
    faults_injected: c.faults,
    webhooks: ctx.webhooks.stats(),
    consistency: {
      duplicate_refunds_by_execution: duplicates.byExecution.length,
      duplicate_refunds_by_idempotency_key: duplicates.byIdempotencyKey.length,
    },
    journal: ctx.store.journalPath,
  });
}

export async function getFaults(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  sendJson(rc.res, 200, ctx.faults.state());
}

export async function setFaults(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const parsed = globalFaultConfigSchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  try {
    sendJson(rc.res, 200, ctx.faults.configure(parsed.data));
  } catch (error) {
    if (error instanceof FaultSyntaxError) throw invalidParameter(error.message, "faults");
    throw error;
  }
}

const releaseHeldSchema = z.strictObject({ idempotency_key: z.string().min(1).max(255).optional() });

/** Ends the latency of writes held under the key (or of all): each goes on now, with the rest of its faults. */
export async function releaseHeld(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  const parsed = releaseHeldSchema.safeParse(await readJsonBody(rc.req, ctx.maxBodyBytes));
  if (!parsed.success) throw fromZodIssues(parsed.error.issues);
  sendJson(rc.res, 200, { released: ctx.held.release(parsed.data.idempotency_key) });
}

/** Forgets all state, the journal included. Refused unless the sandbox was started with allowReset. */
export async function reset(ctx: SandboxContext, rc: RequestContext): Promise<void> {
  if (!ctx.allowReset)
    throw new SandboxHttpError(
      403,
      "invalid_request_error",
      "reset_disabled",
      "This sandbox was started without allowReset.",
    );
  await ctx.store.reset();
  ctx.stripe.charges.clear();
  ctx.faults.clear();
  ctx.webhooks.resetStats();
  Object.assign(ctx.counters, newCounters());
  sendJson(rc.res, 200, { reset: true });
}

export async function health(_ctx: SandboxContext, rc: RequestContext): Promise<void> {
  sendJson(rc.res, 200, { ok: true });
}
