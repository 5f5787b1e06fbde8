import { expect } from "vitest";
import { SandboxCrmConnector } from "@/lib/connectors/sandbox/crm";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import type { Db } from "@/lib/db/client";
import { performEffect, type ConnectorDeps, type EffectOutcome } from "@/lib/connectors/effects";
import { markSent } from "@/lib/use-cases/executions/mark-sent";
import { getExecutionRowOrThrow } from "@/lib/stores/execution-store";
import { findReview, type ReviewWithDecisions } from "@/lib/stores/review-store";
import type { Prisma } from "@/lib/generated/prisma/client";
import { recordIntent } from "@/lib/use-cases/executions/record-intent";
import { transitionTask } from "@/lib/use-cases/tasks/transition-task";
import { createTask } from "@/lib/use-cases/tasks/create-task";
import { acquireLease } from "@/lib/stores/leases";
import type { Actor } from "@/lib/model/actor";
import { isAppError, type AppErrorDetails } from "@/lib/core/errors";
import type { Execution } from "@/lib/generated/prisma/client";
import { refundListSchema } from "@/lib/connectors/sandbox/contract";
import type { Sandbox } from "@/programs/sandbox/server";
import { receiver, sandbox, waitFor } from "@/tests/sandbox/helpers";

/** Fixtures for the side-effect tests (reconciler, reviews, messaging): tasks with a refund in flight, connectors with faults. */

export const agent: Actor = { identity: "spiffe://verity.local/agent/refund-bot", kind: "agent" };
export const alice: Actor = { identity: "user:alice", kind: "user" };
export const bob: Actor = { identity: "user:bob", kind: "user" };
export const carol: Actor = { identity: "user:carol", kind: "user" };

export const refund = { amount_cents: 2500, currency: "usd", charge_id: "ch_1", customer_id: "cus_1" };

/** A v2 agent task in RUNNING, ready to call a tool. */
export async function runningTask(db: Db): Promise<{ id: string; version: number }> {
  const { task } = await createTask(db, { workflow: "agent-task", intent_id: "refund" }, agent);
  return { id: task.id, version: await moveToRunning(db, task.id, task.version) };
}

/** The same, its lease held by `agent` and every move made under the lease's fencing token. */
export async function leasedRunningTask(
  db: Db,
  intentId: string,
  ttlSeconds: number,
): Promise<{ id: string; version: number; fencingToken: string }> {
  const { task } = await createTask(db, { workflow: "agent-task", intent_id: intentId }, agent);
  const { fencingToken } = await acquireLease(db, task.id, { ttl_seconds: ttlSeconds }, agent);
  return { id: task.id, version: await moveToRunning(db, task.id, task.version, fencingToken), fencingToken };
}

async function moveToRunning(db: Db, taskId: string, version: number, fencingToken?: string): Promise<number> {
  for (const to of ["PLANNING", "READY", "RUNNING"])
    version = (
      await transitionTask(
        db,
        taskId,
        { expected_version: version, to, ...(fencingToken ? { fencing_token: fencingToken } : {}) },
        agent,
      )
    ).task.version;
  return version;
}

/** A refund whose intent is recorded (task WAITING_FOR_TOOL); `sent` also marks it SENT, as a worker does just before the call. */
export async function refundExecution(
  db: Db,
  options: { request?: typeof refund; sent?: boolean } = {},
): Promise<Execution> {
  const task = await runningTask(db);
  const intent = await recordIntent(
    db,
    task.id,
    {
      tool_call_id: "refund-1",
      tool: "payments.refund",
      request: options.request ?? refund,
      expected_version: task.version,
    },
    agent,
  );
  expect(intent.kind).toBe("proceed");
  if (options.sent ?? true) await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  return getExecutionRowOrThrow(db, intent.execution.id);
}

/** A CRM note's intent, marked SENT: a reversible effect, whose success report stands on its own evidence. */
export async function noteExecution(db: Db): Promise<Execution> {
  const task = await runningTask(db);
  const intent = await recordIntent(
    db,
    task.id,
    {
      tool_call_id: "note-1",
      tool: "crm.add_note",
      request: { customer_id: "cus_1", text: "refund issued" },
      expected_version: task.version,
    },
    agent,
  );
  expect(intent.kind).toBe("proceed");
  await markSent(db, intent.execution.id, { attempt_id: intent.execution.attemptId }, agent);
  return getExecutionRowOrThrow(db, intent.execution.id);
}

/** The row as the engine reads it: its sealed values opened (lib/stores/execution-store.ts). */
export function executionRow(db: Db, id: string): Promise<Execution> {
  return getExecutionRowOrThrow(db, id);
}

/** A review as the store reads it: its reason and customer opened (lib/stores/review-store.ts). */
export async function reviewRow(db: Db, where: Prisma.ReviewWhereUniqueInput): Promise<ReviewWithDecisions> {
  const review = await findReview(db, where);
  if (!review) throw new Error(`no review where ${JSON.stringify(where)}`);
  return review;
}

export async function taskStatusOf(db: Db, taskId: string): Promise<string> {
  return (await db.task.findFirstOrThrow({ where: { id: taskId } })).status;
}

/**
 * A sandbox provider that sends its refund webhooks to a local receiver;
 * `webhooks()` waits until every webhook it owes is sent and returns their
 * bodies, in the order they arrived.
 */
export async function sandboxWithWebhooks(): Promise<{
  s: Sandbox;
  webhooks: () => Promise<Array<Record<string, any>>>;
}> {
  const hooks = await receiver();
  const s = await sandbox({ webhookUrl: hooks.url });
  const webhooks = async () => {
    await s.webhooksIdle();
    return hooks.received.map((delivery) => JSON.parse(delivery.body) as Record<string, any>);
  };
  return { s, webhooks };
}

export function connectorsFor(
  baseUrl: string,
  options: { faults?: string[]; lookupFaults?: string[]; timeoutMs?: number } = {},
): ConnectorDeps {
  return {
    payments: new SandboxPaymentConnector({ baseUrl, ...options }),
    crm: new SandboxCrmConnector({ baseUrl, ...options }),
  };
}

/** A provider nobody can reach: every lookup is unknown. */
export const unreachable: ConnectorDeps = connectorsFor("http://127.0.0.1:2", { timeoutMs: 2_000 });

/** Past VERITY_SENT_TIMEOUT_MS (30 s by default): SENT and INTENT_RECORDED rows of now are stale then. */
export function afterTimeout(): Date {
  return new Date(Date.now() + 31_000);
}

export async function refundsUnderKey(baseUrl: string, key: string): Promise<number> {
  const res = await fetch(`${baseUrl}/v1/refunds`);
  return refundListSchema.parse(await res.json()).data.filter((r) => r.idempotency_key === key).length;
}

export async function failure(
  promise: Promise<unknown>,
): Promise<{ code: string; invariants: string[]; details: AppErrorDetails }> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error))
      return {
        code: error.code,
        invariants: (error.details.violations ?? []).map((v) => v.invariant),
        details: error.details,
      };
    throw error;
  }
  throw new Error("expected a failure");
}

/**
 * The worker's call reaches the provider, which commits, and its answer is
 * lost (a hanging response; `timeout_after_commit` by default). The client
 * gives up only once the provider shows the refund, so the test does not
 * race a timeout on a loaded machine: a client timeout can fire before the
 * in-process sandbox has even read the request.
 */
export async function lostAnswer(
  baseUrl: string,
  execution: Execution,
  faults: string[] = ["timeout_after_commit"],
): Promise<EffectOutcome> {
  const abort = new AbortController();
  const call = performEffect(execution, connectorsFor(baseUrl, { faults }), {
    signal: abort.signal,
    timeoutMs: 60_000,
  });
  await waitFor(async () => (await refundsUnderKey(baseUrl, execution.idempotencyKey)) === 1, { timeoutMs: 30_000 });
  abort.abort();
  const outcome = await call;
  expect(outcome.kind).toBe("unknown");
  return outcome;
}

/**
 * The execution's effect made at the provider, as a worker makes it, and the
 * success report a worker then sends: the provider's record as result and
 * evidence. An irreversible effect's success is recorded only when the
 * provider holds it (lib/use-cases/reconciliation/confirm-at-provider.ts),
 * so a test that needs a recorded refund makes one; `deps` goes to
 * recordOutcome so that the engine asks the same provider.
 */
export async function successMadeAt(
  deps: ConnectorDeps,
  execution: Execution,
): Promise<{
  attempt_id: string;
  outcome: "succeeded";
  result: Record<string, unknown>;
  evidence: Record<string, unknown>;
}> {
  const outcome = await performEffect(execution, deps);
  if (outcome.kind !== "succeeded") throw new Error(`the provider did not make the effect: ${outcome.message}`);
  return {
    attempt_id: execution.attemptId,
    outcome: "succeeded",
    result: outcome.record,
    evidence: { ...outcome.record, provider: outcome.evidence },
  };
}

/**
 * The provider loses every record it holds (POST /__sandbox/reset): how a
 * success that was confirmed when it was reported comes to be one the
 * provider "never saw", the state the reconciler's and the consistency
 * checker's provider checks exist to find.
 */
export async function providerLosesItsRecords(baseUrl: string): Promise<void> {
  const res = await fetch(`${baseUrl}/__sandbox/reset`, { method: "POST" });
  if (!res.ok) throw new Error(`sandbox reset answered ${res.status}`);
}
