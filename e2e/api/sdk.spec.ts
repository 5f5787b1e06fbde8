import { expect, test } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import {
  faultPoints,
  isVerityApiError,
  VerityApiError,
  VerityClient,
  type FaultPoint,
  type Task,
  type ToolCallContext,
  type ToolOutcome,
} from "@/sdk";
import { SandboxPaymentConnector } from "@/lib/connectors/sandbox/payment";
import { refundSubtasks, uniqueId } from "./agent-api";
import { refundsOfTask, startWebhookSink, useProvider, type Provider, type WebhookSink } from "./provider";

/**
 * The SDK end to end: a VerityClient against the real server, tool calls
 * against the real sandbox provider. Each test seeds its own task.
 */

let provider: Provider;
let sink: WebhookSink;
test.beforeAll(async () => {
  provider = await useProvider();
  sink = await startWebhookSink();
});
test.afterAll(async () => Promise.all([provider.close(), sink.close()]));

function client(
  baseURL: string | undefined,
  extra: Partial<ConstructorParameters<typeof VerityClient>[0]> = {},
): VerityClient {
  return new VerityClient({ baseUrl: baseURL!, token: demoAgent.token, retryBaseDelayMs: 20, ...extra });
}

async function runningTask(verity: VerityClient, fencingToken?: string): Promise<Task> {
  let task = await verity.createTask({
    workflow: "agent-task",
    taskId: uniqueId("sdk"),
    intentId: uniqueId("intent"),
    subtasks: refundSubtasks,
  });
  for (const to of ["PLANNING", "READY", "RUNNING"])
    task = (await verity.transition(task.id, { expectedVersion: task.version, to, fencingToken })).task;
  return task;
}

const refundRequest = { amount_cents: 4200, currency: "usd", charge_id: "ch_sdk", customer_id: "cus_sdk" };

/**
 * A refund through the sandbox connector, with an optional injected fault;
 * counts its calls. The provider's webhook goes to a sink unless a test asks
 * for the server's endpoint: these tests assert what the worker's own
 * report does, which the webhook must not race.
 */
function refundCall(
  faults?: string[],
  options: { webhooksToServer?: boolean; afterCall?: (ctx: ToolCallContext) => Promise<void> } = {},
) {
  const calls: ToolCallContext[] = [];
  const call = async (ctx: ToolCallContext): Promise<ToolOutcome> => {
    calls.push(ctx);
    const payments = new SandboxPaymentConnector({
      baseUrl: provider.url,
      faults,
      timeoutMs: 1_500,
      ...(options.webhooksToServer ? {} : { webhookUrl: sink.url }),
    });
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
    await options.afterCall?.(ctx);
    if (out.kind === "succeeded")
      return {
        outcome: "succeeded",
        result: { refund_id: out.refund.id },
        evidence: { ...out.evidence, metadata: out.refund.metadata },
      };
    if (out.kind === "failed")
      return { outcome: "failed", error: `${out.reason}: ${out.message}`, retryable: out.retryable };
    return { outcome: "unknown", error: `${out.reason}: ${out.message}` };
  };
  return { call, calls };
}

test("executeTool: intent (sent with it), call, outcome; a second executeTool returns the receipt without calling", async ({
  baseURL,
}) => {
  const verity = client(baseURL);
  const task = await runningTask(verity);
  const { call, calls } = refundCall();
  const input = {
    taskId: task.id,
    toolCallId: "refund",
    tool: "payments.refund" as const,
    request: refundRequest,
    expectedVersion: task.version,
  };

  const first = await verity.executeTool(input, call);
  expect(first.kind).toBe("succeeded");
  expect(first.execution).toMatchObject({ status: "SUCCEEDED", attempt: 1, idempotency_key: `vrt:${task.id}:refund` });
  expect(first.task).toMatchObject({ status: "RUNNING", version: task.version + 2 });
  expect(calls).toHaveLength(1);
  expect(calls[0]).toMatchObject({
    idempotencyKey: first.execution.idempotency_key,
    executionId: first.execution.id,
    attemptId: first.execution.attempt_id,
    attempt: 1,
  });

  const replay = await verity.executeTool({ ...input, expectedVersion: first.task.version }, call);
  expect(replay.kind).toBe("receipt");
  expect(replay.execution.id).toBe(first.execution.id);
  expect(replay.task.version).toBe(first.task.version);
  expect(calls).toHaveLength(1);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});

test("performToolCall: Verity makes the refund itself, once; the same call again is the receipt", async ({
  baseURL,
}) => {
  const verity = client(baseURL);
  const task = await runningTask(verity);
  const body = { tool_call_id: "refund", tool: "payments.refund" as const, request: refundRequest };
  const done = await verity.performToolCall(task.id, { ...body, expected_version: task.version });
  if (done.kind !== "performed") throw new Error(`expected performed, got ${done.kind}`);
  expect(done.outcome).toBe("succeeded");
  // The server's own answer, or the provider's webhook that settled it first: succeeded either way.
  expect(["SUCCEEDED", "RECONCILED_SUCCEEDED"]).toContain(done.execution.status);
  expect(done.execution.idempotency_key).toBe(`vrt:${task.id}:refund`);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);

  const now = await verity.getTask(task.id);
  expect(now.status).toBe("RUNNING");
  const replay = await verity.performToolCall(task.id, { ...body, expected_version: now.version });
  expect(replay.kind).toBe("receipt");
  expect(replay.execution.id).toBe(done.execution.id);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});

test("fault points fire in protocol order, each at the moment its name says", async ({ baseURL }) => {
  const seen: Array<{ point: FaultPoint; status: string; refunds: number }> = [];
  let verity!: VerityClient;
  verity = client(baseURL, {
    faultPoint: async (point, ctx) => {
      const execution = await verity.getExecution(ctx.executionId);
      seen.push({ point, status: execution.status, refunds: (await refundsOfTask(provider.url, ctx.taskId)).length });
    },
  });
  const task = await runningTask(verity);
  const result = await verity.executeTool(
    {
      taskId: task.id,
      toolCallId: "refund",
      tool: "payments.refund",
      request: refundRequest,
      expectedVersion: task.version,
    },
    refundCall().call,
  );
  expect(result.kind).toBe("succeeded");
  expect(seen).toEqual([
    // The intent sent the attempt (executeTool's default): no markSent between the two.
    { point: "after_intent", status: "SENT", refunds: 0 },
    { point: "after_sent", status: "SENT", refunds: 0 },
    // The effect exists, and the ledger does not know yet: the crash that matters most.
    { point: "after_call", status: "SENT", refunds: 1 },
    { point: "after_outcome", status: "SUCCEEDED", refunds: 1 },
  ]);
  expect(seen.map((s) => s.point)).toEqual([...faultPoints]);
});

test("a lost answer is UNKNOWN, never failed: the task goes to RECONCILING and nothing is sent again", async ({
  baseURL,
}) => {
  const verity = client(baseURL);
  const task = await runningTask(verity);
  const dropped = refundCall(["drop_response"]);
  const input = {
    taskId: task.id,
    toolCallId: "refund",
    tool: "payments.refund" as const,
    request: refundRequest,
    expectedVersion: task.version,
  };

  const first = await verity.executeTool(input, dropped.call);
  expect(first.kind).toBe("unknown");
  expect(first.execution.status).toBe("OUTCOME_UNKNOWN");
  expect(first.task.status).toBe("RECONCILING");
  // The provider did commit it.
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);

  const clean = refundCall();
  const again = await verity.executeTool({ ...input, expectedVersion: first.task.version }, clean.call);
  // Unresolved, or already settled from the provider's record by the server's
  // reconciler (it runs every second): either way the same execution, not sent again.
  expect(["unresolved", "receipt"]).toContain(again.kind);
  expect(again.execution.id).toBe(first.execution.id);
  expect(clean.calls).toHaveLength(0);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});

test("a call that throws or hangs is UNKNOWN; one that gets a definite refusal is failed, and retried with the same key", async ({
  baseURL,
}) => {
  const verity = client(baseURL);

  const throwing = await runningTask(verity);
  const threw = await verity.executeTool(
    {
      taskId: throwing.id,
      toolCallId: "refund",
      tool: "payments.refund",
      request: refundRequest,
      expectedVersion: throwing.version,
    },
    async () => {
      throw new Error("socket hang up");
    },
  );
  expect(threw).toMatchObject({
    kind: "unknown",
    execution: { status: "OUTCOME_UNKNOWN", error: "the call threw: socket hang up" },
  });

  const hanging = await runningTask(verity);
  const hung = await verity.executeTool(
    {
      taskId: hanging.id,
      toolCallId: "refund",
      tool: "payments.refund",
      request: refundRequest,
      expectedVersion: hanging.version,
      callTimeoutMs: 300,
    },
    (ctx) =>
      new Promise<ToolOutcome>((resolve) =>
        ctx.signal.addEventListener("abort", () =>
          setTimeout(() => resolve({ outcome: "succeeded", evidence: {} }), 200),
        ),
      ),
  );
  expect(hung).toMatchObject({
    kind: "unknown",
    execution: { status: "OUTCOME_UNKNOWN", error: "no outcome within 300 ms" },
  });

  // Refused with a 503 (nothing stored): the server's advice says a retry is safe, so executeTool makes it, under the same key.
  const refused = await runningTask(verity);
  const input = {
    taskId: refused.id,
    toolCallId: "refund",
    tool: "payments.refund" as const,
    request: refundRequest,
    expectedVersion: refused.version,
  };
  const once = refundCall(["error_before_commit"]);
  const clean = refundCall();
  const retried = await verity.executeTool(input, (ctx) =>
    once.calls.length === 0 ? once.call(ctx) : clean.call(ctx),
  );
  expect(retried).toMatchObject({ kind: "succeeded", execution: { status: "SUCCEEDED", attempt: 2 } });
  expect([...once.calls, ...clean.calls].map((c) => [c.attemptId, c.idempotencyKey])).toEqual([
    [`${retried.execution.id}.1`, retried.execution.idempotency_key],
    [`${retried.execution.id}.2`, retried.execution.idempotency_key],
  ]);
  expect(await refundsOfTask(provider.url, refused.id)).toHaveLength(1);

  // Refused on every attempt: after the refund's last one (2), a review, not a third attempt and not a dropped refund.
  const stubborn = await runningTask(verity);
  const always = refundCall(["error_before_commit"]);
  const handed = await verity.executeTool(
    { ...input, taskId: stubborn.id, expectedVersion: stubborn.version },
    always.call,
  );
  expect(always.calls).toHaveLength(2);
  expect(handed).toMatchObject({
    kind: "failed",
    retryable: false,
    execution: { status: "NEEDS_HUMAN", attempt: 2, retry: null },
    task: { status: "WAITING_FOR_HUMAN" },
  });
  expect(await refundsOfTask(provider.url, stubborn.id)).toHaveLength(0);
});

test("success whose evidence names another execution is recorded as UNKNOWN, not success", async ({ baseURL }) => {
  const verity = client(baseURL);
  const task = await runningTask(verity);
  const result = await verity.executeTool(
    {
      taskId: task.id,
      toolCallId: "refund",
      tool: "payments.refund",
      request: refundRequest,
      expectedVersion: task.version,
    },
    async () => ({ outcome: "succeeded", evidence: { idempotency_key: "vrt:someone-else:refund", id: "re_x" } }),
  );
  expect(result.kind).toBe("unknown");
  expect(result.execution.status).toBe("OUTCOME_UNKNOWN");
  expect(result.execution.error).toContain("did not name this execution");
  expect(result.task.status).toBe("RECONCILING");
});

test("a worker killed after the call leaves SENT; the next one is told the outcome is unresolved and sends nothing", async ({
  baseURL,
}) => {
  class Killed extends Error {}
  const dying = client(baseURL, {
    faultPoint: (point) => {
      if (point === "after_call") throw new Killed("SIGKILL at after_call");
    },
  });
  const task = await runningTask(dying);
  const input = {
    taskId: task.id,
    toolCallId: "refund",
    tool: "payments.refund" as const,
    request: refundRequest,
    expectedVersion: task.version,
  };
  await expect(dying.executeTool(input, refundCall().call)).rejects.toBeInstanceOf(Killed);

  const next = client(baseURL);
  const [execution] = await next.listExecutions(task.id);
  expect(execution?.status).toBe("SENT");
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
  const resumed = refundCall();
  const result = await next.executeTool(
    { ...input, expectedVersion: (await next.getTask(task.id)).version },
    resumed.call,
  );
  expect(result.kind).toBe("unresolved");
  expect(resumed.calls).toHaveLength(0);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});

test("a transition whose answer is lost is retried with the same transition_id and applied once", async ({
  baseURL,
}) => {
  let dropped = 0;
  const lossy: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === "POST" && String(input).endsWith("/transitions") && dropped === 0) {
      dropped++;
      await res.arrayBuffer();
      throw new TypeError("fetch failed: the connection was reset after the request was sent");
    }
    return res;
  };
  const verity = client(baseURL, { fetch: lossy });
  const task = await verity.createTask({
    workflow: "agent-task",
    taskId: uniqueId("sdk-retry"),
    intentId: uniqueId("intent"),
    subtasks: refundSubtasks,
  });
  const result = await verity.transition(task.id, {
    expectedVersion: task.version,
    to: "PLANNING",
    reason: "lost once",
  });
  expect(dropped).toBe(1);
  expect(result.replayed).toBe(true);
  expect(result.task).toMatchObject({ status: "PLANNING", version: 2 });
  const log = await verity.listTransitions(task.id);
  expect(log.items.map((t) => t.to_status)).toEqual(["RECEIVED", "PLANNING"]);
  expect(log.items[1]?.id).toBe(result.transition.id);
});

test("problems surface as VerityApiError with status, type, violations and current version", async ({ baseURL }) => {
  const verity = client(baseURL);
  const task = await verity.createTask({
    workflow: "agent-task",
    taskId: uniqueId("sdk-err"),
    intentId: uniqueId("intent"),
    subtasks: refundSubtasks,
  });
  const stale = await verity.transition(task.id, { expectedVersion: 7, to: "PLANNING" }).catch((e: unknown) => e);
  expect(stale).toBeInstanceOf(VerityApiError);
  expect(stale).toMatchObject({
    status: 409,
    code: "version_conflict",
    type: "https://verity.dev/problems/version-conflict",
    currentVersion: 1,
    currentStatus: "RECEIVED",
  });

  const invalid = await verity.transition(task.id, { expectedVersion: 1, to: "COMPLETED" }).catch((e: unknown) => e);
  expect(isVerityApiError(invalid, "invariant_violated")).toBe(true);
  expect((invalid as VerityApiError).violations.length).toBeGreaterThan(0);

  const missing = await verity.getTask("sdk-no-such-task").catch((e: unknown) => e);
  expect(missing).toMatchObject({ status: 404, code: "not_found" });
  const unauthenticated = await new VerityClient({ baseUrl: baseURL!, token: "vrt_not_a_token" })
    .getTask(task.id)
    .catch((e: unknown) => e);
  expect(unauthenticated).toMatchObject({ status: 401, code: "unauthenticated" });
});

test("withLease renews in the background, fences the writes, and releases in finally", async ({ baseURL }) => {
  const verity = client(baseURL);
  const created = await verity.createTask({
    workflow: "agent-task",
    taskId: uniqueId("sdk-lease"),
    intentId: uniqueId("intent"),
    subtasks: refundSubtasks,
  });
  let token = "";
  const final = await verity.withLease(
    created.id,
    async (lease) => {
      token = lease.fencingToken;
      let task = created;
      for (const to of ["PLANNING", "READY"])
        task = (
          await verity.transition(task.id, { expectedVersion: task.version, to, fencingToken: lease.fencingToken })
        ).task;
      // Outlive the TTL: only the background renewals keep the lease.
      await new Promise((r) => setTimeout(r, 2_600));
      expect(lease.signal.aborted).toBe(false);
      expect(Date.parse(lease.lease.expires_at)).toBeGreaterThan(Date.now());
      return (
        await verity.transition(task.id, {
          expectedVersion: task.version,
          to: "RUNNING",
          fencingToken: lease.fencingToken,
        })
      ).task;
    },
    { ttlSeconds: 2, renewEveryMs: 400 },
  );
  expect(final.status).toBe("RUNNING");
  const after = await verity.getLease(created.id);
  expect(after).toMatchObject({ fencing_token: token, active: false });

  // Released even when the work throws.
  await expect(
    verity.withLease(created.id, async () => Promise.reject(new Error("boom")), { ttlSeconds: 30 }),
  ).rejects.toThrow("boom");
  expect((await verity.getLease(created.id))?.active).toBe(false);
});

test("the provider's webhook settles the execution before the worker reports: its record stands and executeTool says succeeded", async ({
  baseURL,
}) => {
  const verity = client(baseURL);
  const task = await runningTask(verity);
  const { call, calls } = refundCall(undefined, {
    webhooksToServer: true,
    // Hold the worker's report back until the webhook has been applied.
    afterCall: async (ctx) => {
      await expect
        .poll(async () => (await verity.getExecution(ctx.executionId)).status, { timeout: 15_000 })
        .toBe("SUCCEEDED");
    },
  });
  const result = await verity.executeTool(
    {
      taskId: task.id,
      toolCallId: "refund",
      tool: "payments.refund",
      request: refundRequest,
      expectedVersion: task.version,
    },
    call,
  );
  expect(calls).toHaveLength(1);
  expect(result.kind).toBe("succeeded");
  expect(result.execution.status).toBe("SUCCEEDED");
  // Settled by the provider's event: the task went through RECONCILING to VALIDATING.
  expect(result.task.status).toBe("VALIDATING");
  const detail = await verity.getExecution(result.execution.id);
  expect(detail.events.at(-1)).toMatchObject({ to_status: "SUCCEEDED", actor: "spiffe://verity.local/system/inbox" });
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});

test("postEvent is received once per event id", async ({ baseURL }) => {
  const verity = client(baseURL);
  const event = { eventId: uniqueId("evt"), source: "crm", type: "customer.replied", payload: { text: "ok" } };
  expect(await verity.postEvent(event)).toMatchObject({ duplicate: false });
  expect(await verity.postEvent(event)).toMatchObject({ duplicate: true, result: { recorded: true } });
});

test("executeTool under a lease taken over while the call was out: the outcome is recorded, leaseConflict says so, the new holder gets the receipt", async ({
  baseURL,
}) => {
  const verity = client(baseURL);
  const created = await verity.createTask({
    workflow: "agent-task",
    taskId: uniqueId("sdk-takeover"),
    intentId: uniqueId("intent"),
    subtasks: refundSubtasks,
  });
  const first = await verity.acquireLease(created.id, { ttlSeconds: 60 });
  const task = await (async () => {
    let t = created;
    for (const to of ["PLANNING", "READY", "RUNNING"])
      t = (await verity.transition(t.id, { expectedVersion: t.version, to, fencingToken: first.fencing_token })).task;
    return t;
  })();
  let second = first;
  const { call, calls } = refundCall(undefined, {
    // The worker stalls past its lease; another worker takes the task over before the report.
    afterCall: async () => {
      await verity.releaseLease(task.id, first.fencing_token);
      second = await verity.acquireLease(task.id, { ttlSeconds: 60 });
    },
  });
  const input = {
    taskId: task.id,
    toolCallId: "refund",
    tool: "payments.refund" as const,
    request: refundRequest,
    expectedVersion: task.version,
  };
  const result = await verity.executeTool({ ...input, fencingToken: first.fencing_token }, call);
  expect(result).toMatchObject({
    kind: "succeeded",
    execution: { status: "SUCCEEDED" },
    task: { status: "WAITING_FOR_TOOL", version: task.version + 1 },
  });
  expect("leaseConflict" in result ? result.leaseConflict?.lease?.fencing_token : undefined).toBe(second.fencing_token);

  const replay = await verity.executeTool(
    { ...input, expectedVersion: task.version + 1, fencingToken: second.fencing_token },
    call,
  );
  expect(replay).toMatchObject({ kind: "receipt", execution: { id: result.execution.id } });
  expect(calls).toHaveLength(1);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
  await verity.releaseLease(task.id, second.fencing_token);
});
