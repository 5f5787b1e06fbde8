import { expect, type APIRequestContext } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask, getTaskVersion, transition, type SeededTask } from "./agent-seed";

/**
 * Freezes a refund the way it happens in production, through real paths
 * only: the demo agent records the intent and marks it sent over the agent
 * API; the request it "sent" is still in flight at the sandbox provider when
 * it gives up waiting and reports the outcome unknown; the server's
 * reconciler then looks the key up, the provider answers "still being
 * processed" (unknown), and the reconciler freezes the execution (NEEDS_HUMAN)
 * and opens a review.
 *
 * The in-flight request is per key (an X-Sandbox-Fault header on that one
 * request: latency, then "not processed"), so parallel tests never see each
 * other's faults, unlike the global /__sandbox/faults switch.
 */
const auth = { Authorization: `Bearer ${demoAgent.token}` };

/** The sandbox started beside the e2e server (playwright.config.ts: E2E_SANDBOX_PORT, or the app port + 1010). */
export const sandboxUrl =
  process.env.E2E_SANDBOX_URL ??
  `http://127.0.0.1:${process.env.E2E_SANDBOX_PORT ?? Number(process.env.E2E_PORT ?? 3100) + 1010}`;

/**
 * Long enough for the reconciler (every second in e2e) to ask while the key
 * is in flight, even on a loaded machine; the hold is released as soon as
 * the refund is frozen, so this is only its upper bound.
 */
const inFlightMs = 8_000;

export interface FrozenRefund {
  task: SeededTask;
  executionId: string;
  idempotencyKey: string;
  amountCents: number;
  customerId: string;
}

async function post(request: APIRequestContext, url: string, data: unknown): Promise<Record<string, unknown>> {
  const res = await request.post(url, { data, headers: auth });
  expect(res.ok(), `${url} → ${res.status()} ${await res.text()}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

let counter = 0;

export async function freezeRefund(
  request: APIRequestContext,
  options: { amountCents: number; customerId?: string },
): Promise<FrozenRefund> {
  counter += 1;
  const customerId = options.customerId ?? `cus_e2e_${counter}_${Math.random().toString(36).slice(2, 7)}`;
  const running = await createRunningTask(request);
  const refund = {
    amount_cents: options.amountCents,
    currency: "usd",
    charge_id: `ch_${running.id}`,
    customer_id: customerId,
  };
  const intent = (await post(request, `/api/v1/tasks/${encodeURIComponent(running.id)}/executions`, {
    tool_call_id: "refund-1",
    tool: "payments.refund",
    request: refund,
    expected_version: running.version,
  })) as { kind: string; execution: { id: string; attempt_id: string; idempotency_key: string } };
  expect(intent.kind).toBe("proceed");
  const { id: executionId, attempt_id, idempotency_key: idempotencyKey } = intent.execution;
  await post(request, `/api/v1/executions/${executionId}/sent`, { attempt_id });

  // The agent's request: it holds the key at the provider for a while, then is not processed.
  const inFlight = fetch(`${sandboxUrl}/v1/refunds`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": idempotencyKey,
      "X-Sandbox-Fault": `latency=${inFlightMs}, error_before_commit`,
    },
    body: JSON.stringify({ ...refund, metadata: { execution_id: executionId, task_id: running.id } }),
  }).then((r) => r.status);
  // Let it reach the provider before the agent reports (in production it left first, too).
  await expect.poll(async () => (await lookupAtProvider(idempotencyKey)).in_flight, { timeout: 5_000 }).toBe(true);

  await post(request, `/api/v1/executions/${executionId}/outcome`, {
    attempt_id,
    outcome: "unknown",
    error: "no answer within 10 s",
  });
  await expect
    .poll(async () => (await getTaskVersion(request, running.id)).status, {
      timeout: 20_000,
      message: "the reconciler freezes the refund",
    })
    .toBe("WAITING_FOR_HUMAN");
  // The provider finally says it processed nothing (now: the freeze was all the hold was for); from now on a lookup answers "not found".
  await releaseHeld(idempotencyKey);
  expect(await inFlight).toBe(503);
  const now = await getTaskVersion(request, running.id);
  return {
    task: { id: running.id, ...now },
    executionId,
    idempotencyKey,
    amountCents: options.amountCents,
    customerId,
  };
}

/** Ends the provider's hold on the requests under this key now: each goes on with the rest of its faults. */
export async function releaseHeld(idempotencyKey: string): Promise<void> {
  const res = await fetch(`${sandboxUrl}/__sandbox/held/release`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ idempotency_key: idempotencyKey }),
  });
  expect(res.ok).toBe(true);
}

export async function lookupAtProvider(idempotencyKey: string): Promise<{
  data: Array<{ id: string; amount_cents: number; metadata: Record<string, string> }>;
  in_flight: boolean;
}> {
  const res = await fetch(`${sandboxUrl}/v1/refunds?idempotency_key=${encodeURIComponent(idempotencyKey)}`);
  expect(res.ok).toBe(true);
  return (await res.json()) as {
    data: Array<{ id: string; amount_cents: number; metadata: Record<string, string> }>;
    in_flight: boolean;
  };
}

/** Every refund the provider holds for this execution, whatever its key: "exactly one" is checked against all of them. */
export async function refundsForExecution(
  executionId: string,
): Promise<Array<{ id: string; idempotency_key: string }>> {
  const res = await fetch(`${sandboxUrl}/v1/refunds`);
  expect(res.ok).toBe(true);
  const { data } = (await res.json()) as {
    data: Array<{ id: string; idempotency_key: string; metadata: Record<string, string> }>;
  };
  return data.filter((r) => r.metadata.execution_id === executionId);
}

/** The agent finishes the task once the refund is settled: mandatory subtasks done, then COMPLETED. */
export async function completeValidatedTask(request: APIRequestContext, task: SeededTask): Promise<SeededTask> {
  const current = { ...task, ...(await getTaskVersion(request, task.id)) };
  return transition(request, current, {
    to: "COMPLETED",
    reason: "refund confirmed by the provider",
    patch: {
      subtasks: [
        { id: "lookup-order", status: "COMPLETED" },
        { id: "issue-refund", status: "COMPLETED" },
      ],
    },
  });
}

/**
 * A refund the provider applied with another amount than asked, under the
 * execution's key (a provider bug, or someone reusing the key): the
 * reconciler finds it, raises an effect_mismatch divergence and freezes the
 * execution. The provider's webhook is sent nowhere, so the reconciler is the
 * one who finds out.
 */
export async function freezeMismatchedRefund(
  request: APIRequestContext,
  options: { amountCents: number; providerAmountCents: number },
): Promise<FrozenRefund> {
  counter += 1;
  const customerId = `cus_e2e_mm_${counter}_${Math.random().toString(36).slice(2, 7)}`;
  const running = await createRunningTask(request);
  const refund = {
    amount_cents: options.amountCents,
    currency: "usd",
    charge_id: `ch_${running.id}`,
    customer_id: customerId,
  };
  const intent = (await post(request, `/api/v1/tasks/${encodeURIComponent(running.id)}/executions`, {
    tool_call_id: "refund-1",
    tool: "payments.refund",
    request: refund,
    expected_version: running.version,
  })) as { execution: { id: string; attempt_id: string; idempotency_key: string } };
  const { id: executionId, attempt_id, idempotency_key: idempotencyKey } = intent.execution;
  await post(request, `/api/v1/executions/${executionId}/sent`, { attempt_id });
  const applied = await fetch(`${sandboxUrl}/v1/refunds`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": idempotencyKey,
      "X-Sandbox-Webhook-Url": "http://127.0.0.1:9/nowhere",
    },
    body: JSON.stringify({
      ...refund,
      amount_cents: options.providerAmountCents,
      metadata: { execution_id: executionId, task_id: running.id },
    }),
  });
  expect(applied.status).toBe(200);
  await post(request, `/api/v1/executions/${executionId}/outcome`, {
    attempt_id,
    outcome: "unknown",
    error: "connection reset",
  });
  await expect
    .poll(async () => (await getTaskVersion(request, running.id)).status, {
      timeout: 20_000,
      message: "the reconciler freezes the refund",
    })
    .toBe("WAITING_FOR_HUMAN");
  const now = await getTaskVersion(request, running.id);
  return {
    task: { id: running.id, ...now },
    executionId,
    idempotencyKey,
    amountCents: options.amountCents,
    customerId,
  };
}
