import { expect, test } from "@playwright/test";
import { AgentApi, authHeaders, expectProblem, fieldsOf, type TaskBody, type TransitionBody } from "./agent-api";

test.use({ extraHTTPHeaders: authHeaders });

test("GET returns the version as ETag; If-None-Match on it is a 304", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const res = await api.getTask(task.id);
  expect(res.status()).toBe(200);
  expect(res.headers()["etag"]).toBe('"1"');
  expect(res.headers()["cache-control"]).toContain("no-store");

  const unchanged = await api.getTask(task.id, { "If-None-Match": '"1"' });
  expect(unchanged.status()).toBe(304);
  expect(unchanged.headers()["etag"]).toBe('"1"');

  await api.step(task, { to: "PLANNING" });
  const changed = await api.getTask(task.id, { "If-None-Match": '"1"' });
  expect(changed.status()).toBe(200);
  expect(changed.headers()["etag"]).toBe('"2"');
});

test('If-Match accepts "N", N and W/"N"; expected_version in the body works too', async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  for (const [ifMatch, to] of [
    ['"1"', "PLANNING"],
    ["2", "READY"],
    ['W/"3"', "RUNNING"],
  ] as const) {
    const res = await api.transition(task.id, { to }, { "If-Match": ifMatch });
    expect(res.status(), await res.text()).toBe(200);
  }
  const res = await api.transition(task.id, { to: "WAITING_FOR_TOOL", expected_version: 4 });
  expect(res.status(), await res.text()).toBe(200);
  // Both, agreeing, is fine.
  const both = await api.transition(task.id, { to: "VALIDATING", expected_version: 5 }, { "If-Match": '"5"' });
  expect(both.status(), await both.text()).toBe(200);
  expect((await api.task(task.id)).version).toBe(6);
});

test("a stale If-Match is a 409 with current_version, and the task is unchanged", async ({ request }) => {
  const api = new AgentApi(request);
  const created = await api.createAgentTask();
  const task = await api.drive(created, ["PLANNING", "READY"]);

  const stale = await api.transition(task.id, { to: "CANCELLED" }, { "If-Match": '"1"' });
  const problem = await expectProblem(stale, 409, "version-conflict");
  expect(problem.current_version).toBe(3);
  expect(problem.current_status).toBe("READY");
  expect(stale.headers()["etag"]).toBe('"3"');
  await api.expectUnchanged(task);

  const staleBody = await api.transition(task.id, { to: "CANCELLED", expected_version: 2 });
  expect((await expectProblem(staleBody, 409, "version-conflict")).current_version).toBe(3);
  await api.expectUnchanged(task);
});

test("If-Match and expected_version that disagree are a 400 naming expected_version", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const res = await api.transition(task.id, { to: "PLANNING", expected_version: 2 }, { "If-Match": '"1"' });
  const problem = await expectProblem(res, 400, "validation-failed");
  expect(fieldsOf(problem)).toEqual(["expected_version"]);
  await api.expectUnchanged(task);
});

test("a missing version and an unusable If-Match are 400s naming the field", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const missing = await expectProblem(await api.transition(task.id, { to: "PLANNING" }), 400, "validation-failed");
  expect(fieldsOf(missing)).toEqual(["expected_version"]);
  expect(missing.errors![0]!.message).toContain("If-Match");
  for (const ifMatch of ["*", '"1", "2"', '"abc"']) {
    const problem = await expectProblem(
      await api.transition(task.id, { to: "PLANNING" }, { "If-Match": ifMatch }),
      400,
      "validation-failed",
    );
    expect(fieldsOf(problem)).toEqual(["If-Match"]);
  }
  await api.expectUnchanged(task);
});

test("retrying a transition with the same transition_id returns the first result and logs it once", async ({
  request,
}) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const body = { to: "PLANNING", transition_id: `tr-${task.id}`, reason: "start" };

  const first = await api.transition(task.id, body, { "If-Match": '"1"' });
  expect(first.status()).toBe(200);
  const a = (await first.json()) as { task: TaskBody; transition: TransitionBody; replayed: boolean };
  expect(a.replayed).toBe(false);

  const retry = await api.transition(task.id, body, { "If-Match": '"1"' });
  expect(retry.status(), await retry.text()).toBe(200);
  expect(retry.headers()["idempotent-replayed"]).toBe("true");
  expect(retry.headers()["etag"]).toBe('"2"');
  const b = (await retry.json()) as { task: TaskBody; transition: TransitionBody; replayed: boolean };
  expect(b.replayed).toBe(true);
  expect(b.transition).toEqual(a.transition);
  expect(b.task.version).toBe(2);
  expect(b.task.status).toBe("PLANNING");

  const now = await api.task(task.id);
  expect(now.version).toBe(2);
  const log = await api.transitions(task.id);
  expect(log.filter((t) => t.id === body.transition_id)).toHaveLength(1);
  expect(log).toHaveLength(2);

  // The same id for a different request is refused, not replayed.
  const reused = await api.transition(task.id, { ...body, to: "CANCELLED" }, { "If-Match": '"2"' });
  await expectProblem(reused, 409, "idempotency-conflict");
  await api.expectUnchanged(now);
});

test("two writers racing on the same version: exactly one wins, the other gets a 409", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const [x, y] = await Promise.all([
    api.transition(task.id, { to: "PLANNING" }, { "If-Match": '"1"' }),
    api.transition(task.id, { to: "CANCELLED" }, { "If-Match": '"1"' }),
  ]);
  expect([x.status(), y.status()].sort()).toEqual([200, 409]);
  const winner = x.status() === 200 ? x : y;
  const won = ((await winner.json()) as { task: TaskBody }).task;
  const now = await api.task(task.id);
  expect(now.version).toBe(2);
  expect(now.status).toBe(won.status);
  expect(await api.transitions(task.id)).toHaveLength(2);
});
