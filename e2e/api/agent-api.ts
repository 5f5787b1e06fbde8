import http from "node:http";
import { expect, type APIRequestContext, type APIResponse } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";

/**
 * A small client for /api/v1, the API tests' page object: each test seeds
 * its own tasks through it, so tests never depend on demo data or on each
 * other. Requests go through Playwright's `request` fixture to the
 * production server playwright.config.ts starts.
 */
export const authHeaders = { Authorization: `Bearer ${demoAgent.token}` };
export { demoAgent };

let counter = 0;
/** A task id no other test (or earlier run against the same database) uses. */
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${counter}`;
}

export const refundSubtasks = [
  { id: "lookup-order", title: "Look up the order", mandatory: true },
  { id: "issue-refund", title: "Issue the refund", mandatory: true },
  { id: "notify-customer", title: "Notify the customer", mandatory: false },
];

export interface TaskBody {
  id: string;
  status: string;
  version: number;
  workflow: { name: string; version: number; digest: string };
  state: {
    status: string;
    version: number;
    updated_by: string;
    gates: Record<string, boolean>;
    subtasks: Array<{ id: string; status: string; mandatory: boolean }>;
    active_agents: string[];
    completed_agents: string[];
  };
  updated_at: string;
  updated_by: string;
  created_by: string;
}

export interface TransitionBody {
  id: string;
  task_id: string;
  from_version: number | null;
  to_version: number;
  from_status: string | null;
  to_status: string;
  actor: string;
  actor_kind: string;
  reason: string | null;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: Array<{ field: string; message: string }>;
  violations?: Array<{ invariant: string; message: string }>;
  current_version?: number;
  current_status?: string;
  max_bytes?: number;
  request_id?: string;
}

export class AgentApi {
  constructor(readonly request: APIRequestContext) {}

  createTask(body: Record<string, unknown>): Promise<APIResponse> {
    return this.request.post("/api/v1/tasks", { data: body });
  }

  async createAgentTask(extra: Record<string, unknown> = {}): Promise<TaskBody> {
    const res = await this.createTask({
      workflow: "agent-task",
      task_id: uniqueId("t"),
      intent_id: uniqueId("intent"),
      subtasks: refundSubtasks,
      ...extra,
    });
    expect(res.status(), await res.text()).toBe(201);
    return (await res.json()) as TaskBody;
  }

  async createDeliveryTask(extra: Record<string, unknown> = {}): Promise<TaskBody> {
    const res = await this.createTask({
      workflow: "delivery",
      task_id: uniqueId("d"),
      intent_id: uniqueId("intent"),
      ...extra,
    });
    expect(res.status(), await res.text()).toBe(201);
    return (await res.json()) as TaskBody;
  }

  getTask(id: string, headers: Record<string, string> = {}): Promise<APIResponse> {
    return this.request.get(`/api/v1/tasks/${encodeURIComponent(id)}`, { headers });
  }

  async task(id: string): Promise<TaskBody> {
    const res = await this.getTask(id);
    expect(res.status(), await res.text()).toBe(200);
    return (await res.json()) as TaskBody;
  }

  transition(id: string, body: unknown, headers: Record<string, string> = {}): Promise<APIResponse> {
    return this.request.post(`/api/v1/tasks/${encodeURIComponent(id)}/transitions`, {
      data: body as Record<string, unknown>,
      headers,
    });
  }

  /** A transition that must succeed; returns the new task state. */
  async step(task: Pick<TaskBody, "id" | "version">, body: Record<string, unknown>): Promise<TaskBody> {
    const res = await this.transition(task.id, body, { "If-Match": `"${task.version}"` });
    expect(res.status(), await res.text()).toBe(200);
    return ((await res.json()) as { task: TaskBody }).task;
  }

  /** Drives a task through `path` (target statuses, or full transition bodies). */
  async drive(task: TaskBody, path: Array<string | Record<string, unknown>>): Promise<TaskBody> {
    let current = task;
    for (const s of path) current = await this.step(current, typeof s === "string" ? { to: s } : s);
    return current;
  }

  log(id: string, query = ""): Promise<APIResponse> {
    return this.request.get(`/api/v1/tasks/${encodeURIComponent(id)}/transitions${query}`);
  }

  async transitions(id: string): Promise<TransitionBody[]> {
    const res = await this.log(id, "?limit=500");
    expect(res.status(), await res.text()).toBe(200);
    return ((await res.json()) as { items: TransitionBody[] }).items;
  }

  /** Bad input never changes state: the task reads back exactly as before. */
  async expectUnchanged(before: TaskBody): Promise<void> {
    const after = await this.task(before.id);
    expect(after.version).toBe(before.version);
    expect(after.status).toBe(before.status);
    expect(after.updated_at).toBe(before.updated_at);
    expect(after.state).toEqual(before.state);
  }
}

/** Asserts an RFC 9457 problem response and returns its body. */
export async function expectProblem(res: APIResponse, status: number, type: string): Promise<Problem> {
  const text = await res.text();
  expect(res.status(), text).toBe(status);
  expect(res.headers()["content-type"]).toContain("application/problem+json");
  const problem = JSON.parse(text) as Problem;
  expect(problem.type).toBe(`https://verity.dev/problems/${type}`);
  expect(problem.status).toBe(status);
  expect(typeof problem.title).toBe("string");
  expect(typeof problem.detail).toBe("string");
  expect(problem.instance).toBe(new URL(res.url()).pathname);
  return problem;
}

export function fieldsOf(problem: Problem): string[] {
  return (problem.errors ?? []).map((e) => e.field);
}

export function invariantsOf(problem: Problem): string[] {
  return (problem.violations ?? []).map((v) => v.invariant);
}

/**
 * A POST through node:http, for what Playwright's client will not send: a
 * chunked body with no Content-Length, or no Content-Type at all.
 */
export function rawPost(
  baseURL: string,
  path: string,
  headers: Record<string, string>,
  chunks: Array<string | Buffer>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, baseURL), { method: "POST", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    // After the response has resolved the promise, a reset (the server stopped
    // reading an oversized body, which is the point) rejects nothing.
    req.on("error", reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}
