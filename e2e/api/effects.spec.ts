import { expect, test, type APIRequestContext } from "@playwright/test";
import { AgentApi, authHeaders, demoAgent, expectProblem, fieldsOf, invariantsOf, type TaskBody } from "./agent-api";
import { signWebhook } from "@/lib/connectors/sandbox/webhook-signature";
import {
  refundsOfTask,
  serverWebhookSecret,
  startWebhookSink,
  useProvider,
  type Provider,
  type WebhookSink,
} from "./provider";

/**
 * The execution ledger and leases over HTTP: write-ahead intent → sent →
 * outcome, receipts instead of repeated calls, no retry of an unknown
 * outcome, and fencing tokens that keep a stale worker from writing.
 */
test.use({ extraHTTPHeaders: authHeaders });

interface Execution {
  id: string;
  task_id: string;
  tool_call_id: string;
  attempt: number;
  attempt_id: string;
  idempotency_key: string;
  tool: string;
  irreversible: boolean;
  status: string;
  result: unknown;
  evidence: unknown;
  error: string | null;
}
interface IntentBody {
  kind: "proceed" | "receipt";
  execution: Execution;
  task: TaskBody;
}
interface Lease {
  task_id: string;
  lease_id: string;
  holder: string;
  fencing_token: string;
  expires_at: string;
  active: boolean;
}

const refundRequest = { amount_cents: 1500, currency: "usd", charge_id: "ch_e2e", customer_id: "cus_e2e" };

class LedgerApi extends AgentApi {
  constructor(request: APIRequestContext) {
    super(request);
  }

  async runningTask(): Promise<TaskBody> {
    return this.drive(await this.createAgentTask(), ["PLANNING", "READY", "RUNNING"]);
  }

  intent(taskId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    return this.request.post(`/api/v1/tasks/${encodeURIComponent(taskId)}/executions`, { data: body, headers });
  }

  async proceed(
    task: Pick<TaskBody, "id" | "version">,
    toolCallId = "refund",
    extra: Record<string, unknown> = {},
  ): Promise<IntentBody> {
    const res = await this.intent(
      task.id,
      { tool_call_id: toolCallId, tool: "payments.refund", request: refundRequest, ...extra },
      { "If-Match": `"${task.version}"` },
    );
    expect(res.status(), await res.text()).toBe(201);
    return (await res.json()) as IntentBody;
  }

  sent(execution: Pick<Execution, "id" | "attempt_id">, fencingToken?: string) {
    return this.request.post(`/api/v1/executions/${execution.id}/sent`, {
      data: { attempt_id: execution.attempt_id, ...(fencingToken ? { fencing_token: fencingToken } : {}) },
    });
  }

  /**
   * The refund made at the provider with the execution's key and id, as an
   * agent makes it: the server confirms a reported success against the
   * provider's record. Its webhook goes to the sink, so the worker's own
   * report settles it.
   */
  async refundAtProvider(
    execution: Pick<Execution, "id" | "task_id" | "idempotency_key">,
  ): Promise<{ id: string; idempotency_key: string; metadata: Record<string, string> }> {
    const call = await fetch(`${provider.url}/v1/refunds`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Idempotency-Key": execution.idempotency_key,
        "X-Sandbox-Webhook-Url": sink.url,
      },
      body: JSON.stringify({ ...refundRequest, metadata: { execution_id: execution.id, task_id: execution.task_id } }),
    });
    expect(call.status, await call.clone().text()).toBe(200);
    return (await call.json()) as { id: string; idempotency_key: string; metadata: Record<string, string> };
  }

  outcome(executionId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    return this.request.post(`/api/v1/executions/${executionId}/outcome`, { data: body, headers });
  }

  async execution(
    id: string,
  ): Promise<
    Execution & { events: Array<{ from_status: string | null; to_status: string; actor: string; attempt_id: string }> }
  > {
    const res = await this.request.get(`/api/v1/executions/${id}`);
    expect(res.status(), await res.text()).toBe(200);
    return (await res.json()) as Execution & {
      events: Array<{ from_status: string | null; to_status: string; actor: string; attempt_id: string }>;
    };
  }

  async ledger(taskId: string): Promise<Execution[]> {
    const res = await this.request.get(`/api/v1/tasks/${encodeURIComponent(taskId)}/executions`);
    expect(res.status(), await res.text()).toBe(200);
    return ((await res.json()) as { items: Execution[] }).items;
  }

  acquire(taskId: string, body?: Record<string, unknown>) {
    return this.request.post(`/api/v1/tasks/${encodeURIComponent(taskId)}/lease`, body ? { data: body } : {});
  }

  async lease(taskId: string, ttlSeconds = 60, leaseId?: string): Promise<Lease> {
    const res = await this.acquire(taskId, { ttl_seconds: ttlSeconds, ...(leaseId ? { lease_id: leaseId } : {}) });
    expect(res.status(), await res.text()).toBe(200);
    return (await res.json()) as Lease;
  }
}

let provider: Provider;
let sink: WebhookSink;
test.beforeAll(async () => {
  provider = await useProvider();
  sink = await startWebhookSink();
});
test.afterAll(async () => Promise.all([provider.close(), sink.close()]));

test("intent → sent → outcome: the intent is durable before the call, success is recorded with the provider's evidence", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();

  const first = await api.proceed(task);
  expect(first.kind).toBe("proceed");
  expect(first.execution).toMatchObject({
    task_id: task.id,
    tool_call_id: "refund",
    tool: "payments.refund",
    irreversible: true,
    status: "INTENT_RECORDED",
    attempt: 1,
    idempotency_key: `vrt:${task.id}:refund`,
  });
  expect(first.task).toMatchObject({ status: "WAITING_FOR_TOOL", version: task.version + 1 });

  // A worker that lost the answer asks again: the same attempt, nothing written.
  const again = await api.intent(task.id, {
    tool_call_id: "refund",
    tool: "payments.refund",
    request: refundRequest,
    expected_version: task.version,
  });
  expect(again.status(), await again.text()).toBe(200);
  expect(again.headers()["idempotent-replayed"]).toBe("true");
  const replay = (await again.json()) as IntentBody;
  expect(replay).toMatchObject({
    kind: "proceed",
    execution: { id: first.execution.id, attempt_id: first.execution.attempt_id },
  });

  const sent = await api.sent(first.execution);
  expect(sent.status(), await sent.text()).toBe(200);
  expect(((await sent.json()) as Execution).status).toBe("SENT");
  expect((await api.sent(first.execution)).status()).toBe(200);

  // The real call, with the execution's key and id, as an agent makes it. Its
  // webhook goes elsewhere: here the worker's own report settles it.
  const call = await fetch(`${provider.url}/v1/refunds`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": first.execution.idempotency_key,
      "X-Sandbox-Webhook-Url": sink.url,
    },
    body: JSON.stringify({ ...refundRequest, metadata: { execution_id: first.execution.id, task_id: task.id } }),
  });
  expect(call.status).toBe(200);
  const refund = (await call.json()) as { id: string; idempotency_key: string; metadata: Record<string, string> };

  const outcome = await api.outcome(first.execution.id, {
    attempt_id: first.execution.attempt_id,
    outcome: "succeeded",
    result: { refund_id: refund.id },
    evidence: refund,
  });
  expect(outcome.status(), await outcome.text()).toBe(200);
  const settled = (await outcome.json()) as { execution: Execution; task: TaskBody; lease_conflict: unknown };
  expect(settled.execution).toMatchObject({ status: "SUCCEEDED", result: { refund_id: refund.id } });
  expect(settled.lease_conflict).toBeNull();
  expect(settled.task).toMatchObject({ status: "RUNNING", version: task.version + 2 });
  expect(outcome.headers()["etag"]).toBe(`"${task.version + 2}"`);
  // The same report again is answered, not applied twice.
  const repeated = await api.outcome(first.execution.id, {
    attempt_id: first.execution.attempt_id,
    outcome: "succeeded",
    result: { refund_id: refund.id },
    evidence: refund,
  });
  expect(repeated.status()).toBe(200);
  expect(((await repeated.json()) as { task: TaskBody }).task.version).toBe(task.version + 2);

  const detail = await api.execution(first.execution.id);
  expect(detail.events.map((e) => [e.from_status, e.to_status])).toEqual([
    [null, "INTENT_RECORDED"],
    ["INTENT_RECORDED", "SENT"],
    ["SENT", "SUCCEEDED"],
  ]);
  expect(
    detail.events.every((e) => e.actor === demoAgent.identity && e.attempt_id === first.execution.attempt_id),
  ).toBe(true);
  expect((await api.ledger(task.id)).map((e) => [e.tool_call_id, e.status])).toEqual([["refund", "SUCCEEDED"]]);
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});

test("a replayed step gets the receipt: the call is not made again", async ({ request }) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  const { execution } = await api.proceed(task);
  await api.sent(execution);
  const evidence = await api.refundAtProvider(execution);
  const done = (await (
    await api.outcome(execution.id, {
      attempt_id: execution.attempt_id,
      outcome: "succeeded",
      result: { refund_id: evidence.id },
      evidence,
    })
  ).json()) as { task: TaskBody };

  const res = await api.intent(task.id, {
    tool_call_id: "refund",
    tool: "payments.refund",
    request: refundRequest,
    expected_version: done.task.version,
  });
  expect(res.status(), await res.text()).toBe(200);
  const receipt = (await res.json()) as IntentBody;
  expect(receipt.kind).toBe("receipt");
  expect(receipt.execution).toMatchObject({
    id: execution.id,
    status: "SUCCEEDED",
    result: { refund_id: evidence.id },
  });
  // Nothing was written: the task is where the outcome left it.
  expect(receipt.task).toMatchObject({ status: "RUNNING", version: done.task.version });
  await api.expectUnchanged(done.task);

  // The same tool_call_id with a different request is another call: refused.
  const other = await api.intent(task.id, {
    tool_call_id: "refund",
    tool: "payments.refund",
    request: { ...refundRequest, amount_cents: 9 },
    expected_version: done.task.version,
  });
  await expectProblem(other, 409, "idempotency-conflict");
});

test("success without evidence naming the execution is refused (422), and the execution stays SENT", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  const { execution } = await api.proceed(task);
  await api.sent(execution);

  for (const evidence of [
    undefined,
    { id: "re_somebody_elses", idempotency_key: "vrt:other:refund" },
    { metadata: { execution_id: "exec_other" } },
  ]) {
    const res = await api.outcome(execution.id, {
      attempt_id: execution.attempt_id,
      outcome: "succeeded",
      ...(evidence ? { evidence } : {}),
    });
    expect(invariantsOf(await expectProblem(res, 422, "invariant-violated"))).toEqual([
      "success_requires_matching_evidence",
    ]);
  }
  expect((await api.execution(execution.id)).status).toBe("SENT");
  expect((await api.task(task.id)).status).toBe("WAITING_FOR_TOOL");

  // Evidence that names the execution but was written by the agent, with no call behind it
  // (issue 11's reproduction: it was accepted and the task moved on), is checked against the
  // provider's record of a refund: it has none, so the report is refused and nothing moves.
  const selfMade = await api.outcome(execution.id, {
    attempt_id: execution.attempt_id,
    outcome: "succeeded",
    evidence: { execution_id: execution.id },
  });
  const refused = await expectProblem(selfMade, 422, "invariant-violated");
  expect(invariantsOf(refused)).toEqual(["success_confirmed_by_provider"]);
  expect(String(refused.detail)).toContain("The provider has nothing under key");
  expect((await api.execution(execution.id)).status).toBe("SENT");
  expect((await api.task(task.id)).status).toBe("WAITING_FOR_TOOL");
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(0);

  // Once the refund is made, evidence naming the execution id (as the provider's metadata carries it) is enough.
  const made = await api.refundAtProvider(execution);
  const ok = await api.outcome(execution.id, {
    attempt_id: execution.attempt_id,
    outcome: "succeeded",
    evidence: { id: made.id, metadata: { execution_id: execution.id } },
  });
  expect(ok.status(), await ok.text()).toBe(200);
  expect(((await ok.json()) as { execution: Execution }).execution.evidence).toMatchObject({
    confirmed_at_provider: { record: { id: made.id, idempotency_key: execution.idempotency_key } },
  });
});

test("an unknown outcome sends the task to RECONCILING, and a retry is refused until it is reconciled", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  const { execution } = await api.proceed(task);
  await api.sent(execution);

  const res = await api.outcome(execution.id, {
    attempt_id: execution.attempt_id,
    outcome: "unknown",
    error: "timeout: no answer within 5000 ms",
  });
  expect(res.status(), await res.text()).toBe(200);
  const after = (await res.json()) as { execution: Execution; task: TaskBody };
  expect(after.execution).toMatchObject({ status: "OUTCOME_UNKNOWN", error: "timeout: no answer within 5000 ms" });
  expect(after.task.status).toBe("RECONCILING");

  // An agent that treats the timeout as a failure and tries again is stopped.
  const retry = await api.intent(task.id, {
    tool_call_id: "refund",
    tool: "payments.refund",
    request: refundRequest,
    expected_version: after.task.version,
  });
  if (retry.status() === 409) {
    // The server's reconciler (every second in these tests) got there first:
    // it asked the provider, which never saw the request, and settled the
    // call, moving the task on. Then the retry is refused as stale, and the
    // execution was settled by reconciliation, not by the agent.
    await expectProblem(retry, 409, "version-conflict");
    expect((await api.execution(execution.id)).status).toMatch(/^RECONCILED_/);
  } else {
    const problem = await expectProblem(retry, 422, "invariant-violated");
    expect(invariantsOf(problem)).toEqual(["unknown_outcome_reconciled_before_retry"]);
    expect((problem as unknown as { execution_id: string }).execution_id).toBe(execution.id);
  }
  // Nor can it claim failure now: only reconciliation settles an unknown outcome.
  const failed = await api.outcome(execution.id, {
    attempt_id: execution.attempt_id,
    outcome: "failed",
    error: "gave up",
  });
  expect(invariantsOf(await expectProblem(failed, 422, "invariant-violated"))).toEqual(["execution_status_machine"]);
  expect((await api.ledger(task.id)).filter((e) => e.tool_call_id === "refund")).toHaveLength(1);
});

test("a known failure allows a new attempt with the same idempotency key", async ({ request }) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  const { execution } = await api.proceed(task);
  await api.sent(execution);
  const failed = (await (
    await api.outcome(execution.id, {
      attempt_id: execution.attempt_id,
      outcome: "failed",
      error: "not_processed: 503",
    })
  ).json()) as { execution: Execution; task: TaskBody };
  expect(failed.execution.status).toBe("FAILED");
  expect(failed.task.status).toBe("RUNNING");

  const second = await api.proceed(failed.task);
  expect(second.execution).toMatchObject({
    id: execution.id,
    attempt: 2,
    attempt_id: `${execution.id}.2`,
    idempotency_key: execution.idempotency_key,
    status: "INTENT_RECORDED",
  });
  // The first attempt's reports are stale now.
  await expectProblem(await api.sent(execution), 409, "version-conflict");
});

test("a stale fencing token is a 409 lease-conflict and the task is unchanged; the header and the body must agree", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.drive(await api.createAgentTask(), ["PLANNING", "READY"]);

  const first = await api.lease(task.id, 60);
  expect(first).toMatchObject({ task_id: task.id, holder: demoAgent.identity, active: true });
  // A lease is one process's: acquiring again under the same identity is a conflict naming the holder's token...
  const twice = await expectProblem(await api.acquire(task.id, { ttl_seconds: 60 }), 409, "lease-conflict");
  expect(twice.detail).toContain(`fencing token ${first.fencing_token} (lease ${first.lease_id})`);
  // ...unless it is a retry naming the same lease_id: the same lease, renewed.
  const mine = await api.lease(task.id, 60, first.lease_id);
  expect([mine.lease_id, mine.fencing_token]).toEqual([first.lease_id, first.fencing_token]);

  const release = await request.post(`/api/v1/tasks/${task.id}/lease/release`, {
    headers: { "Fencing-Token": first.fencing_token },
  });
  expect(release.status()).toBe(204);
  const second = await api.lease(task.id, 60);
  expect(BigInt(second.fencing_token)).toBeGreaterThan(BigInt(first.fencing_token));

  // The worker that held the first token wakes up and writes: refused, nothing written.
  const stale = await api.transition(
    task.id,
    { to: "RUNNING" },
    { "If-Match": `"${task.version}"`, "Fencing-Token": first.fencing_token },
  );
  expect(invariantsOf(await expectProblem(stale, 409, "lease-conflict"))).toEqual(["fencing_token_current"]);
  const staleBody = await api.transition(task.id, {
    to: "RUNNING",
    expected_version: task.version,
    fencing_token: first.fencing_token,
  });
  await expectProblem(staleBody, 409, "lease-conflict");
  await expectProblem(
    await request.post(`/api/v1/tasks/${task.id}/lease/renew`, { data: { fencing_token: first.fencing_token } }),
    409,
    "lease-conflict",
  );
  await api.expectUnchanged(task);

  const mismatch = await api.transition(
    task.id,
    { to: "RUNNING", expected_version: task.version, fencing_token: first.fencing_token },
    { "Fencing-Token": second.fencing_token },
  );
  expect(fieldsOf(await expectProblem(mismatch, 400, "validation-failed"))).toEqual(["fencing_token"]);
  expect(
    fieldsOf(
      await expectProblem(
        await api.transition(task.id, { to: "RUNNING", expected_version: task.version }, { "Fencing-Token": "abc" }),
        400,
        "validation-failed",
      ),
    ),
  ).toEqual(["Fencing-Token"]);
  await api.expectUnchanged(task);

  // The current token writes.
  const ok = await api.transition(
    task.id,
    { to: "RUNNING" },
    { "If-Match": `"${task.version}"`, "Fencing-Token": second.fencing_token },
  );
  expect(ok.status(), await ok.text()).toBe(200);
  const running = ((await ok.json()) as { task: TaskBody }).task;

  // A stale token cannot record an intent either: no execution, no move to WAITING_FOR_TOOL.
  const staleIntent = await api.intent(
    task.id,
    { tool_call_id: "refund", tool: "payments.refund", request: refundRequest, expected_version: running.version },
    { "Fencing-Token": first.fencing_token },
  );
  await expectProblem(staleIntent, 409, "lease-conflict");
  await api.expectUnchanged(running);
  expect(await api.ledger(task.id)).toEqual([]);

  const renewed = await request.post(`/api/v1/tasks/${task.id}/lease/renew`, {
    headers: { "Fencing-Token": second.fencing_token },
    data: { ttl_seconds: 120 },
  });
  expect(renewed.status(), await renewed.text()).toBe(200);
  expect(((await renewed.json()) as Lease).fencing_token).toBe(second.fencing_token);

  const state = (await (await request.get(`/api/v1/tasks/${task.id}/lease`)).json()) as { lease: Lease };
  expect(state.lease).toMatchObject({ fencing_token: second.fencing_token, active: true, holder: demoAgent.identity });
  expect(
    (
      await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: second.fencing_token } })
    ).status(),
  ).toBe(204);
  // Releasing again (a retry) is harmless.
  expect(
    (
      await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: second.fencing_token } })
    ).status(),
  ).toBe(204);
  expect(((await (await request.get(`/api/v1/tasks/${task.id}/lease`)).json()) as { lease: Lease }).lease.active).toBe(
    false,
  );
});

test("two processes of one agent identity never share a lease: the second is refused, and once it takes over the first cannot send", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  // X and Y are two worker processes of the demo agent: one identity, one token.
  const x = await api.lease(task.id, 60);
  const refused = await expectProblem(await api.acquire(task.id, { ttl_seconds: 60 }), 409, "lease-conflict");
  expect(refused.detail).toContain(`${demoAgent.identity} with fencing token ${x.fencing_token}`);
  // Y without a token cannot write under X's live lease: it cannot be told from X.
  await expectProblem(
    await api.intent(task.id, {
      tool_call_id: "refund",
      tool: "payments.refund",
      request: refundRequest,
      expected_version: task.version,
    }),
    409,
    "lease-conflict",
  );
  expect(await api.ledger(task.id)).toEqual([]);

  // X records the intent; then X stalls and its lease ends; Y takes over with a greater token.
  const intent = await api.intent(
    task.id,
    { tool_call_id: "refund", tool: "payments.refund", request: refundRequest, expected_version: task.version },
    { "Fencing-Token": x.fencing_token },
  );
  expect(intent.status(), await intent.text()).toBe(201);
  const execution = ((await intent.json()) as IntentBody).execution;
  expect(
    (
      await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: x.fencing_token } })
    ).status(),
  ).toBe(204);
  const y = await api.lease(task.id, 60);
  expect(y.lease_id).not.toBe(x.lease_id);
  expect(BigInt(y.fencing_token)).toBeGreaterThan(BigInt(x.fencing_token));

  // X wakes and would send: refused before anything leaves, with or without its token.
  await expectProblem(await api.sent(execution, x.fencing_token), 409, "lease-conflict");
  await expectProblem(await api.sent(execution), 409, "lease-conflict");
  expect((await api.execution(execution.id)).status).toBe("INTENT_RECORDED");
  // Y sends the same attempt; X still cannot claim the send as its own.
  const sent = await api.sent(execution, y.fencing_token);
  expect(sent.status(), await sent.text()).toBe(200);
  await expectProblem(await api.sent(execution, x.fencing_token), 409, "lease-conflict");
  const events = (await api.execution(execution.id)).events.filter((e) => e.to_status === "SENT");
  expect(events).toHaveLength(1);
  expect(
    (
      await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: y.fencing_token } })
    ).status(),
  ).toBe(204);
});

test("an outcome under a stale fencing token is recorded (200 with lease_conflict) without moving the task; the new holder gets the receipt", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  const first = await api.lease(task.id, 60);
  const { execution, task: waiting } = await api.proceed(task, "refund", { fencing_token: first.fencing_token });
  await api.sent(execution);
  // The worker pauses past its lease while the call is out; the task is taken over.
  expect(
    (
      await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: first.fencing_token } })
    ).status(),
  ).toBe(204);
  const second = await api.lease(task.id, 60);
  const late = await api.refundAtProvider(execution);

  const report = {
    attempt_id: execution.attempt_id,
    outcome: "succeeded",
    result: { refund_id: late.id },
    evidence: { id: late.id, idempotency_key: execution.idempotency_key },
  };
  const res = await api.outcome(execution.id, report, { "Fencing-Token": first.fencing_token });
  expect(res.status(), await res.text()).toBe(200);
  const body = (await res.json()) as {
    execution: Execution;
    task: TaskBody;
    lease_conflict: { detail: string; lease: Lease | null } | null;
  };
  expect(body.execution).toMatchObject({ status: "SUCCEEDED", result: { refund_id: late.id } });
  expect(body.task).toMatchObject({ status: "WAITING_FOR_TOOL", version: waiting.version });
  expect(res.headers()["etag"]).toBe(`"${waiting.version}"`);
  expect(body.lease_conflict?.lease).toMatchObject({ fencing_token: second.fencing_token, active: true });
  expect(body.lease_conflict?.detail).toContain("the task was not moved");
  await api.expectUnchanged(waiting);

  // The new holder replays the step: the receipt, no call; then it moves the task on.
  const replay = await api.intent(
    task.id,
    { tool_call_id: "refund", tool: "payments.refund", request: refundRequest, expected_version: waiting.version },
    { "Fencing-Token": second.fencing_token },
  );
  expect(replay.status(), await replay.text()).toBe(200);
  expect((await replay.json()) as IntentBody).toMatchObject({
    kind: "receipt",
    execution: { id: execution.id, result: { refund_id: late.id } },
  });
  const moved = await api.transition(
    task.id,
    { to: "RUNNING" },
    { "If-Match": `"${waiting.version}"`, "Fencing-Token": second.fencing_token },
  );
  expect(moved.status(), await moved.text()).toBe(200);
  await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: second.fencing_token } });
});

test("lease requests: an omitted body takes the default TTL; renew needs a token; unknown tasks are 404", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.createAgentTask();
  expect(
    ((await (await request.get(`/api/v1/tasks/${task.id}/lease`)).json()) as { lease: Lease | null }).lease,
  ).toBeNull();
  const res = await api.acquire(task.id);
  expect(res.status(), await res.text()).toBe(200);
  const lease = (await res.json()) as Lease & { acquired_at: string };
  expect(res.headers()["fencing-token"]).toBe(lease.fencing_token);
  const ttl = (Date.parse(lease.expires_at) - Date.parse(lease.acquired_at)) / 1000;
  expect(ttl).toBeGreaterThan(55);
  expect(ttl).toBeLessThan(65);

  expect(
    fieldsOf(await expectProblem(await request.post(`/api/v1/tasks/${task.id}/lease/renew`), 400, "validation-failed")),
  ).toEqual(["fencing_token"]);
  expect(
    fieldsOf(await expectProblem(await api.acquire(task.id, { ttl_seconds: 0 }), 400, "validation-failed")),
  ).toEqual(["ttl_seconds"]);
  await expectProblem(await api.acquire("no-such-task"), 404, "not-found");
  await expectProblem(await request.get("/api/v1/tasks/no-such-task/lease"), 404, "not-found");
  await expectProblem(await request.get("/api/v1/tasks/no-such-task/executions"), 404, "not-found");
  await expectProblem(await request.get("/api/v1/executions/exec_nope"), 404, "not-found");
  await request.post(`/api/v1/tasks/${task.id}/lease/release`, { data: { fencing_token: lease.fencing_token } });
});

test("reading the ledger needs tasks:read, writing it tasks:transition", async ({ playwright, baseURL }) => {
  const { demoObserver } = await import("@/lib/config/demo-accounts");
  const observer = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${demoObserver.token}` },
  });
  const anonymous = await playwright.request.newContext({ baseURL, extraHTTPHeaders: {} });
  const agent = await playwright.request.newContext({ baseURL, extraHTTPHeaders: authHeaders });
  try {
    const api = new LedgerApi(agent);
    const task = await api.runningTask();
    const { execution } = await api.proceed(task);
    expect((await observer.get(`/api/v1/tasks/${task.id}/executions`)).status()).toBe(200);
    expect((await observer.get(`/api/v1/executions/${execution.id}`)).status()).toBe(200);
    expect((await observer.get(`/api/v1/tasks/${task.id}/lease`)).status()).toBe(200);
    await expectProblem(
      await observer.post(`/api/v1/executions/${execution.id}/sent`, { data: { attempt_id: execution.attempt_id } }),
      403,
      "forbidden",
    );
    await expectProblem(await observer.post(`/api/v1/tasks/${task.id}/lease`, { data: {} }), 403, "forbidden");
    await expectProblem(await anonymous.get(`/api/v1/tasks/${task.id}/executions`), 401, "unauthenticated");
    await expectProblem(
      await anonymous.post(`/api/v1/tasks/${task.id}/executions`, { data: {} }),
      401,
      "unauthenticated",
    );
    expect((await api.execution(execution.id)).status).toBe("INTENT_RECORDED");
  } finally {
    await Promise.all([observer.dispose(), anonymous.dispose(), agent.dispose()]);
  }
});

test("an inbound event is received once per event_id: a redelivery gets the first receipt", async ({ request }) => {
  const eventId = `evt-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const event = { event_id: eventId, source: "crm", type: "customer.replied", payload: { text: "thanks" } };
  const first = await request.post("/api/v1/events", { data: event });
  expect(first.status(), await first.text()).toBe(201);
  expect(await first.json()).toEqual({ event_id: eventId, duplicate: false, result: { recorded: true } });
  const again = await request.post("/api/v1/events", { data: event });
  expect(again.status()).toBe(200);
  expect(again.headers()["idempotent-replayed"]).toBe("true");
  expect(await again.json()).toEqual({ event_id: eventId, duplicate: true, result: { recorded: true } });
  await expectProblem(
    await request.post("/api/v1/events", { data: { ...event, type: "customer.left" } }),
    409,
    "idempotency-conflict",
  );
  expect(
    fieldsOf(
      await expectProblem(
        await request.post("/api/v1/events", { data: { source: "crm", type: "x", payload: {} } }),
        400,
        "validation-failed",
      ),
    ),
  ).toEqual(["event_id"]);
});

function refundEvent(eventId: string, execution: Execution, taskId: string) {
  return {
    id: eventId,
    type: "refund.succeeded",
    created_at: new Date().toISOString(),
    data: {
      id: `re_${eventId.slice(4)}`,
      status: "succeeded",
      ...refundRequest,
      metadata: { execution_id: execution.id, task_id: taskId },
      idempotency_key: execution.idempotency_key,
      created_at: new Date().toISOString(),
    },
  };
}

test("a signed provider webhook settles a SENT execution once; a redelivery changes nothing; a bad signature is refused", async ({
  playwright,
  baseURL,
}) => {
  // No bearer token: the signature is the webhook's only credential.
  const provider = await playwright.request.newContext({ baseURL, extraHTTPHeaders: {} });
  const agent = await playwright.request.newContext({ baseURL, extraHTTPHeaders: authHeaders });
  try {
    const api = new LedgerApi(agent);
    const task = await api.runningTask();
    const { execution } = await api.proceed(task);
    await api.sent(execution);
    const body = JSON.stringify(
      refundEvent(`evt_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`, execution, task.id),
    );
    const post = (signature: string | null, text = body) =>
      provider.post("/api/v1/events/sandbox", {
        data: text,
        headers: { "Content-Type": "application/json", ...(signature ? { "Sandbox-Signature": signature } : {}) },
      });
    const secret = serverWebhookSecret();
    const now = Math.floor(Date.now() / 1000);

    await expectProblem(await post(null), 401, "unauthenticated");
    await expectProblem(await post(signWebhook("not-the-secret-at-all", body, now)), 401, "unauthenticated");
    await expectProblem(await post(signWebhook(secret, body, now - 3600)), 401, "unauthenticated");
    await expectProblem(
      await post(signWebhook(secret, body, now), body.replace('"succeeded"', '"succeeded" ')),
      401,
      "unauthenticated",
    );
    expect((await api.execution(execution.id)).status).toBe("SENT");

    const first = await post(signWebhook(secret, body, now));
    expect(first.status(), await first.text()).toBe(200);
    const receipt = (await first.json()) as {
      duplicate: boolean;
      result: { applied: boolean; outcome: string; execution_id: string; status: string };
    };
    expect(receipt).toMatchObject({
      duplicate: false,
      result: { applied: true, outcome: "settled", execution_id: execution.id, status: "SUCCEEDED" },
    });
    const again = await post(signWebhook(secret, body, now + 1));
    expect(again.status()).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true, result: receipt.result });

    const settled = await api.execution(execution.id);
    expect(settled.status).toBe("SUCCEEDED");
    expect(settled.events.filter((e) => e.to_status === "SUCCEEDED")).toHaveLength(1);
    expect((await api.task(task.id)).status).toBe("VALIDATING");
    // The worker's own report arrives late: the provider's record stands.
    const late = await api.outcome(execution.id, {
      attempt_id: execution.attempt_id,
      outcome: "unknown",
      error: "timeout",
    });
    expect(invariantsOf(await expectProblem(late, 422, "invariant-violated"))).toEqual(["execution_status_machine"]);
  } finally {
    await Promise.all([provider.dispose(), agent.dispose()]);
  }
});

test("the provider's own webhook, delivered twice (duplicate_webhook), settles the execution exactly once", async ({
  request,
}) => {
  const api = new LedgerApi(request);
  const task = await api.runningTask();
  const { execution } = await api.proceed(task);
  await api.sent(execution);
  // Webhooks go to the server's endpoint, as the sandbox of `npm start` is configured.
  const call = await fetch(`${provider.url}/v1/refunds`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": execution.idempotency_key,
      "X-Sandbox-Fault": "duplicate_webhook,drop_response",
    },
    body: JSON.stringify({ ...refundRequest, metadata: { execution_id: execution.id, task_id: task.id } }),
  }).catch(() => null);
  expect(call).toBeNull();
  await expect.poll(async () => (await api.execution(execution.id)).status, { timeout: 15_000 }).toBe("SUCCEEDED");
  // Give the second delivery time to arrive; it must change nothing.
  await new Promise((r) => setTimeout(r, 1_500));
  const settled = await api.execution(execution.id);
  expect(settled.events.map((e) => e.to_status)).toEqual(["INTENT_RECORDED", "SENT", "SUCCEEDED"]);
  expect(settled.events.at(-1)?.actor).toBe("spiffe://verity.local/system/inbox");
  expect((await api.task(task.id)).status).toBe("VALIDATING");
  expect(await refundsOfTask(provider.url, task.id)).toHaveLength(1);
});
