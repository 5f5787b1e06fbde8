import { expect, test } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask } from "../pages/agent-seed";

/** The instruction ledger over HTTP: ETag is the ledger seq, CAS by If-Match, replay by instruction_id, problem+json. */
const auth = { Authorization: `Bearer ${demoAgent.token}` };

test('ledger CAS over HTTP: If-Match "0" on an empty ledger, a stale seq is a 409 naming the current one, a retried instruction_id replays', async ({
  request,
}) => {
  const task = await createRunningTask(request);
  const url = `/api/v1/tasks/${encodeURIComponent(task.id)}/instructions`;
  const empty = await request.get(url, { headers: auth });
  expect(empty.status()).toBe(200);
  expect(empty.headers().etag).toBe('"0"');
  expect(await empty.json()).toMatchObject({ task_id: task.id, seq: 0, items: [], current: {} });

  const body = {
    instruction_id: `ins-${task.id}`,
    topic: "refund",
    directive: "forbid",
    text: "Do not issue refund",
    source: "user",
  };
  const first = await request.post(url, { data: body, headers: { ...auth, "If-Match": '"0"' } });
  expect(first.status()).toBe(201);
  expect(first.headers().etag).toBe('"1"');
  expect(await first.json()).toMatchObject({
    replayed: false,
    instruction: { seq: 1, authorized: true, source: "user", issued_by: demoAgent.identity },
  });

  const replay = await request.post(url, { data: body, headers: { ...auth, "If-Match": '"0"' } });
  expect(replay.status()).toBe(200);
  expect(replay.headers()["idempotent-replayed"]).toBe("true");

  const stale = await request.post(url, {
    data: { topic: "refund", directive: "allow", text: "go" },
    headers: { ...auth, "If-Match": '"0"' },
  });
  expect(stale.status()).toBe(409);
  expect(stale.headers()["content-type"]).toContain("application/problem+json");
  expect(await stale.json()).toMatchObject({ current_seq: 1, current_version: 1 });

  const asOperator = await request.post(url, {
    data: { expected_seq: 1, topic: "refund", directive: "allow", text: "go", source: "operator" },
    headers: auth,
  });
  expect(asOperator.status()).toBe(403);

  const ledger = await (await request.get(url, { headers: auth })).json();
  expect(ledger).toMatchObject({
    seq: 1,
    current: { refund: { text: "Do not issue refund" } },
    items: [{ seq: 1, standing: { kind: "current" } }],
  });

  // A refund that names no instruction is still held to the current forbid.
  const version = (await (await request.get(`/api/v1/tasks/${encodeURIComponent(task.id)}`, { headers: auth })).json())
    .version as number;
  const intent = await request.post(`/api/v1/tasks/${encodeURIComponent(task.id)}/executions`, {
    data: {
      tool_call_id: "refund",
      tool: "payments.refund",
      request: { amount_cents: 100, currency: "usd", charge_id: "ch_x", customer_id: "cus_x" },
      expected_version: version,
    },
    headers: auth,
  });
  expect(intent.status()).toBe(202);
  expect(await intent.json()).toMatchObject({
    kind: "blocked",
    instructions: { kind: "forbidden", relied_on: null, current: { text: "Do not issue refund" } },
  });

  const doc = await (await request.get("/api/v1/openapi.json")).json();
  expect(Object.keys(doc.paths)).toContain("/api/v1/tasks/{id}/instructions");
});
