import { expect, type APIRequestContext } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";

/**
 * Console tests seed their own tasks the way agents do, through the agent
 * API with the demo agent's bearer token, so no test depends on demo data or
 * on another test.
 */
const auth = { Authorization: `Bearer ${demoAgent.token}` };

export interface SeededTask {
  id: string;
  version: number;
  status: string;
}

let counter = 0;
/** Unique per run and per test: ids double as search prefixes in the list tests. */
export function uniqueTaskId(prefix = "ui"): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}-${counter}`;
}

const refundSubtasks = [
  { id: "lookup-order", title: "Look up the order", mandatory: true },
  { id: "issue-refund", title: "Issue the refund", mandatory: true },
  { id: "notify-customer", title: "Notify the customer", mandatory: false },
];

/** POST with a short retry while the API answers 404/503 (it may still be warming up). */
async function post(request: APIRequestContext, url: string, data: unknown): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    const res = await request.post(url, { data, headers: auth });
    if ((res.status() === 404 || res.status() === 503) && attempt < 5) {
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    expect(res.ok(), `${url} → ${res.status()} ${await res.text()}`).toBe(true);
    return (await res.json()) as Record<string, unknown>;
  }
}

function toSeeded(body: Record<string, unknown>): SeededTask {
  const task = (body.task ?? body) as { id: string; version: number; status: string };
  return { id: task.id, version: task.version, status: task.status };
}

export async function createTask(
  request: APIRequestContext,
  options: { workflow?: "agent-task" | "delivery"; id?: string } = {},
): Promise<SeededTask> {
  const workflow = options.workflow ?? "agent-task";
  const id = options.id ?? uniqueTaskId();
  return toSeeded(
    await post(request, "/api/v1/tasks", {
      workflow,
      task_id: id,
      intent_id: `intent-${id}`,
      subtasks: workflow === "agent-task" ? refundSubtasks : undefined,
      budget: { currency_committed_usd: 10_000 },
    }),
  );
}

export async function transition(
  request: APIRequestContext,
  task: SeededTask,
  step: { to?: string; reason?: string; patch?: Record<string, unknown> },
): Promise<SeededTask> {
  return toSeeded(
    await post(request, `/api/v1/tasks/${encodeURIComponent(task.id)}/transitions`, {
      expected_version: task.version,
      ...step,
    }),
  );
}

/** An agent task driven RECEIVED → PLANNING → READY → RUNNING: version 4, cancellable by a person. */
export async function createRunningTask(request: APIRequestContext, id?: string): Promise<SeededTask> {
  let task = await createTask(request, { id });
  for (const to of ["PLANNING", "READY", "RUNNING"]) task = await transition(request, task, { to });
  return task;
}

export async function getTaskVersion(
  request: APIRequestContext,
  id: string,
): Promise<{ version: number; status: string }> {
  const res = await request.get(`/api/v1/tasks/${encodeURIComponent(id)}`, { headers: auth });
  expect(res.ok()).toBe(true);
  const body = (await res.json()) as { version: number; status: string };
  return { version: body.version, status: body.status };
}

export async function listTransitionActors(
  request: APIRequestContext,
  id: string,
): Promise<Array<{ to_status: string; actor: string; reason: string | null }>> {
  const res = await request.get(`/api/v1/tasks/${encodeURIComponent(id)}/transitions`, { headers: auth });
  expect(res.ok()).toBe(true);
  const { items } = (await res.json()) as { items: Array<{ to_status: string; actor: string; reason: string | null }> };
  return items.map(({ to_status, actor, reason }) => ({ to_status, actor, reason }));
}
