import { expect, test } from "@playwright/test";
import {
  AgentApi,
  authHeaders,
  demoAgent,
  expectProblem,
  refundSubtasks,
  uniqueId,
  type TaskBody,
  type TransitionBody,
} from "./agent-api";

test.use({ extraHTTPHeaders: authHeaders });

test("an agent task is created and driven through its lifecycle to COMPLETED", async ({ request }) => {
  const api = new AgentApi(request);
  const taskId = uniqueId("life");
  const created = await api.createTask({
    workflow: "agent-task",
    task_id: taskId,
    intent_id: uniqueId("refund"),
    subtasks: refundSubtasks,
    budget: { currency_committed_usd: 5 },
  });
  expect(created.status()).toBe(201);
  expect(created.headers()["content-type"]).toContain("application/json");
  expect(created.headers()["etag"]).toBe('"1"');
  expect(created.headers()["location"]).toBe(`/api/v1/tasks/${taskId}`);
  const task = (await created.json()) as TaskBody;
  expect(task).toMatchObject({
    id: taskId,
    status: "RECEIVED",
    version: 1,
    created_by: demoAgent.identity,
    updated_by: demoAgent.identity,
  });
  expect(task.workflow.name).toBe("agent-task");
  expect(task.state.subtasks.map((s) => s.status)).toEqual(["PENDING", "PENDING", "PENDING"]);

  const steps: Array<{ to: string; patch?: Record<string, unknown>; reason?: string }> = [
    { to: "PLANNING" },
    { to: "READY" },
    {
      to: "RUNNING",
      patch: {
        active_agents: [demoAgent.identity],
        budget: { currency_spent_usd: 0.4, tokens_spent: 1800, hops_used: 1 },
      },
    },
    {
      to: "WAITING_FOR_TOOL",
      patch: { subtasks: [{ id: "lookup-order", status: "COMPLETED" }] },
      reason: "refund call in flight",
    },
    { to: "VALIDATING", patch: { subtasks: [{ id: "issue-refund", status: "COMPLETED" }] } },
    {
      to: "COMPLETED",
      patch: { active_agents: [], completed_agents: [demoAgent.identity] },
      reason: "refund confirmed by provider",
    },
  ];
  let etag = created.headers()["etag"]!;
  let current = task;
  for (const step of steps) {
    const res = await api.transition(taskId, step, { "If-Match": etag });
    expect(res.status(), await res.text()).toBe(200);
    const body = (await res.json()) as { task: TaskBody; transition: TransitionBody; replayed: boolean };
    expect(body.replayed).toBe(false);
    expect(res.headers()["idempotent-replayed"]).toBeUndefined();
    expect(body.task.version).toBe(current.version + 1);
    expect(body.task.status).toBe(step.to);
    expect(body.transition).toMatchObject({
      task_id: taskId,
      from_version: current.version,
      to_version: current.version + 1,
      from_status: current.status,
      to_status: step.to,
      actor: demoAgent.identity,
      actor_kind: "agent",
      reason: step.reason ?? null,
    });
    etag = res.headers()["etag"]!;
    expect(etag).toBe(`"${body.task.version}"`);
    current = body.task;
  }

  const final = await api.task(taskId);
  expect(final.status).toBe("COMPLETED");
  expect(final.version).toBe(7);
  expect(final.updated_by).toBe(demoAgent.identity);
  expect(final.state.subtasks.filter((s) => s.mandatory).every((s) => s.status === "COMPLETED")).toBe(true);
  expect(final.state.completed_agents).toEqual([demoAgent.identity]);

  const log = await api.transitions(taskId);
  expect(log.map((t) => t.to_version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  expect(log.map((t) => t.to_status)).toEqual(["RECEIVED", ...steps.map((s) => s.to)]);
  expect(log[0]!.from_version).toBeNull();
  expect(log.every((t) => t.actor === demoAgent.identity)).toBe(true);
});

test("an in-place update (no `to`) changes state without changing status", async ({ request }) => {
  const api = new AgentApi(request);
  const task = await api.createAgentTask();
  const updated = await api.step(task, {
    patch: { artifacts: { implementation_plan: "plans/refund.md" } },
    reason: "plan written",
  });
  expect(updated.status).toBe("RECEIVED");
  expect(updated.version).toBe(2);
  expect((await api.transitions(task.id)).at(-1)).toMatchObject({
    from_status: "RECEIVED",
    to_status: "RECEIVED",
    reason: "plan written",
  });
});

test("re-creating with the same task_id and body returns the task; a different body is a conflict", async ({
  request,
}) => {
  const api = new AgentApi(request);
  const body = {
    workflow: "agent-task",
    task_id: uniqueId("idem"),
    intent_id: uniqueId("intent"),
    subtasks: refundSubtasks,
  };
  const first = await api.createTask(body);
  expect(first.status()).toBe(201);
  const task = (await first.json()) as TaskBody;

  const again = await api.createTask(body);
  expect(again.status()).toBe(200);
  expect(again.headers()["idempotent-replayed"]).toBe("true");
  expect(((await again.json()) as TaskBody).id).toBe(task.id);

  const different = await api.createTask({ ...body, intent_id: uniqueId("other") });
  await expectProblem(different, 409, "idempotency-conflict");
  await api.expectUnchanged(task);
  expect(await api.transitions(task.id)).toHaveLength(1);
});
