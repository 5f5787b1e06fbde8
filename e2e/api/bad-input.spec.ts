import { expect, test } from "@playwright/test";
import { AgentApi, authHeaders, expectProblem, fieldsOf, rawPost, refundSubtasks, uniqueId } from "./agent-api";
import { demoObserver } from "@/lib/config/demo-accounts";

test.use({ extraHTTPHeaders: authHeaders });

const path = (id: string) => `/api/v1/tasks/${id}/transitions`;

test('malformed JSON is a 400 for the whole body (field "")', async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  // A Buffer is sent as it is; a string would be JSON-encoded by Playwright.
  const res = await request.post(path(task.id), {
    data: Buffer.from('{"to": "PLANNING", "expected_version": 1'),
    headers: { "Content-Type": "application/json" },
  });
  const problem = await expectProblem(res, 400, "validation-failed");
  expect(fieldsOf(problem)).toEqual([""]);
  expect(problem.errors![0]!.message).toContain("malformed JSON");
  await api.expectUnchanged(task);

  const empty = await request.post(path(task.id), {
    data: Buffer.alloc(0),
    headers: { "Content-Type": "application/json" },
  });
  expect(fieldsOf(await expectProblem(empty, 400, "validation-failed"))).toEqual([""]);
  await api.expectUnchanged(task);
});

test("unknown fields are 400s naming each one, top level and nested", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const topLevel = await api.transition(
    task.id,
    { to: "PLANNING", priority: "high", force: true },
    { "If-Match": '"1"' },
  );
  expect(fieldsOf(await expectProblem(topLevel, 400, "validation-failed")).sort()).toEqual(["force", "priority"]);

  const nested = await api.transition(
    task.id,
    {
      to: "PLANNING",
      patch: {
        gates: { plan_approved: true, ship_it: true },
        subtasks: [{ id: "lookup-order", status: "COMPLETED", owner: "x" }],
        mood: "ok",
      },
    },
    { "If-Match": '"1"' },
  );
  expect(fieldsOf(await expectProblem(nested, 400, "validation-failed")).sort()).toEqual([
    "patch.gates.ship_it",
    "patch.mood",
    "patch.subtasks.0.owner",
  ]);
  await api.expectUnchanged(task);

  const taskId = uniqueId("unknown");
  const create = await api.createTask({
    workflow: "agent-task",
    task_id: taskId,
    intent_id: "x",
    subtasks: [{ ...refundSubtasks[0], due: "tomorrow" }],
    colour: "red",
  });
  expect(fieldsOf(await expectProblem(create, 400, "validation-failed")).sort()).toEqual(["colour", "subtasks.0.due"]);
  await expectProblem(await api.getTask(taskId), 404, "not-found");
});

test("wrong types are 400s naming the field", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const gate = await api.transition(task.id, { patch: { gates: { plan_approved: "yes" } } }, { "If-Match": '"1"' });
  expect(fieldsOf(await expectProblem(gate, 400, "validation-failed"))).toEqual(["patch.gates.plan_approved"]);

  const version = await api.transition(task.id, { to: "PLANNING", expected_version: "1" });
  expect(fieldsOf(await expectProblem(version, 400, "validation-failed"))).toEqual(["expected_version"]);

  const spent = await api.transition(task.id, { patch: { budget: { tokens_spent: -5 } } }, { "If-Match": '"1"' });
  expect(fieldsOf(await expectProblem(spent, 400, "validation-failed"))).toEqual(["patch.budget.tokens_spent"]);

  const array = await api.transition(task.id, [1, 2, 3], { "If-Match": '"1"' });
  expect(fieldsOf(await expectProblem(array, 400, "validation-failed"))).toEqual([""]);

  const create = await api.createTask({ workflow: "agent-task", intent_id: 42 });
  expect(fieldsOf(await expectProblem(create, 400, "validation-failed"))).toEqual(["intent_id"]);
  const workflow = await api.createTask({ workflow: "no-such-workflow", intent_id: "x" });
  expect(fieldsOf(await expectProblem(workflow, 400, "validation-failed"))).toEqual(["workflow"]);
  await api.expectUnchanged(task);
});

test("a body over the limit is a 413, whether declared by Content-Length or streamed chunked", async ({
  request,
  baseURL,
}) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const big = JSON.stringify({ to: "PLANNING", reason: "x".repeat(70 * 1024) });
  const declared = await api.transition(task.id, JSON.parse(big) as unknown, { "If-Match": '"1"' });
  expect((await expectProblem(declared, 413, "payload-too-large")).max_bytes).toBe(65536);
  await api.expectUnchanged(task);

  // No Content-Length: the limit must hold while reading the stream.
  const chunk = "x".repeat(8 * 1024);
  const chunks = ['{"to":"PLANNING","reason":"', ...Array.from({ length: 12 }, () => chunk), '"}'];
  const streamed = await rawPost(
    baseURL!,
    path(task.id),
    { ...authHeaders, "Content-Type": "application/json", "If-Match": '"1"', "Transfer-Encoding": "chunked" },
    chunks,
  );
  expect(streamed.status, streamed.body).toBe(413);
  expect(streamed.headers["content-type"]).toContain("application/problem+json");
  await api.expectUnchanged(task);
});

test("a body that is not JSON by Content-Type is a 415", async ({ request, baseURL }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const text = await request.post(path(task.id), {
    data: Buffer.from('{"to":"PLANNING","expected_version":1}'),
    headers: { "Content-Type": "text/plain" },
  });
  expect(fieldsOf(await expectProblem(text, 415, "unsupported-media-type"))).toEqual(["Content-Type"]);
  const form = await request.post(path(task.id), { form: { to: "PLANNING", expected_version: "1" } });
  await expectProblem(form, 415, "unsupported-media-type");
  const latin1 = await request.post(path(task.id), {
    data: Buffer.from('{"to":"PLANNING","expected_version":1}'),
    headers: { "Content-Type": "application/json; charset=iso-8859-1" },
  });
  await expectProblem(latin1, 415, "unsupported-media-type");
  const none = await rawPost(baseURL!, path(task.id), authHeaders, ['{"to":"PLANNING","expected_version":1}']);
  expect(none.status, none.body).toBe(415);
  await api.expectUnchanged(task);

  // application/json with an explicit UTF-8 charset is fine.
  const ok = await request.post(path(task.id), {
    data: Buffer.from('{"to":"PLANNING","expected_version":1}'),
    headers: { "Content-Type": "application/json; charset=UTF-8" },
  });
  expect(ok.status(), await ok.text()).toBe(200);
});

test("a missing, malformed or unknown bearer token is a 401 with WWW-Authenticate", async ({
  request,
  playwright,
  baseURL,
}) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  // extraHTTPHeaders: {} keeps the token of test.use() out of this context.
  const anonymous = await playwright.request.newContext({ baseURL, extraHTTPHeaders: {} });
  try {
    const cases: Array<[Record<string, string>, string | undefined]> = [
      [{}, undefined],
      [{ Authorization: "Basic dXNlcjpwYXNz" }, "invalid_request"],
      [{ Authorization: "Bearer" }, "invalid_request"],
      [{ Authorization: "Bearer vrt_not_a_real_token" }, "invalid_token"],
    ];
    for (const [headers, error] of cases) {
      for (const res of [
        await anonymous.post(path(task.id), { data: { to: "CANCELLED", expected_version: 1 }, headers }),
        await anonymous.get(`/api/v1/tasks/${task.id}`, { headers }),
        await anonymous.post("/api/v1/tasks", { data: { workflow: "agent-task", intent_id: "x" }, headers }),
      ]) {
        const problem = await expectProblem(res, 401, "unauthenticated");
        const challenge = res.headers()["www-authenticate"];
        expect(challenge).toMatch(/^Bearer realm="verity"/);
        if (error) expect(challenge).toContain(`error="${error}"`);
        // The token is never echoed back.
        expect(JSON.stringify(problem)).not.toContain("vrt_not_a_real_token");
      }
    }
  } finally {
    await anonymous.dispose();
  }
  await api.expectUnchanged(task);
});

test("unknown tasks and endpoints are problem+json 404s; unsupported methods 405", async ({ request }) => {
  const api = new AgentApi(request);
  await expectProblem(await api.getTask("no-such-task"), 404, "not-found");
  await expectProblem(await api.transition("no-such-task", { to: "PLANNING", expected_version: 1 }), 404, "not-found");
  await expectProblem(await api.log("no-such-task"), 404, "not-found");
  await expectProblem(await request.get("/api/v1/tasks/no-such-task/next"), 404, "not-found");
  await expectProblem(await request.get("/api/v1/no-such-endpoint"), 404, "not-found");

  const res = await request.delete("/api/v1/tasks");
  await expectProblem(res, 405, "method-not-allowed");
  expect(res.headers()["allow"]).toBe("GET, POST");
});

test("a read-only token can read but not create or transition: 403 naming the permission", async ({
  request,
  playwright,
  baseURL,
}) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const observer = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${demoObserver.token}` },
  });
  try {
    expect((await observer.get(`/api/v1/tasks/${task.id}`)).status()).toBe(200);
    const denied = await expectProblem(
      await observer.post(path(task.id), { data: { to: "CANCELLED", expected_version: 1 } }),
      403,
      "forbidden",
    );
    expect(denied.detail).toContain("tasks:transition");
    await expectProblem(
      await observer.post("/api/v1/tasks", { data: { workflow: "agent-task", intent_id: "x" } }),
      403,
      "forbidden",
    );
  } finally {
    await observer.dispose();
  }
  await api.expectUnchanged(task);
});
