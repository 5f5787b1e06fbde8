import { expect, test } from "@playwright/test";
import {
  AgentApi,
  authHeaders,
  expectProblem,
  fieldsOf,
  uniqueId,
  type TaskBody,
  type TransitionBody,
} from "./agent-api";

test.use({ extraHTTPHeaders: authHeaders });

interface Page {
  items: TaskBody[];
  next_cursor: string | null;
}

test("GET /tasks pages by keyset with q, status and workflow filters", async ({ request }) => {
  const api = new AgentApi(request);
  const prefix = uniqueId("list");
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await api.createTask({ workflow: "agent-task", task_id: `${prefix}-${i}`, intent_id: uniqueId("i") });
    expect(res.status()).toBe(201);
    ids.push(`${prefix}-${i}`);
  }
  await api.step({ id: ids[0]!, version: 1 }, { to: "PLANNING" });

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?q=${prefix}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const res = await request.get(`/api/v1/tasks${query}`);
    expect(res.status(), await res.text()).toBe(200);
    const page = (await res.json()) as Page;
    expect(page.items.length).toBeLessThanOrEqual(2);
    seen.push(...page.items.map((t) => t.id));
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  expect(pages).toBe(3);
  expect([...seen].sort()).toEqual([...ids].sort());
  // Newest activity first: the task just transitioned leads.
  expect(seen[0]).toBe(ids[0]);

  const planning = (await (await request.get(`/api/v1/tasks?q=${prefix}&status=PLANNING`)).json()) as Page;
  expect(planning.items.map((t) => t.id)).toEqual([ids[0]]);
  const delivery = (await (await request.get(`/api/v1/tasks?q=${prefix}&workflow=delivery`)).json()) as Page;
  expect(delivery.items).toEqual([]);
});

test("GET /tasks rejects bad query parameters with 400s naming them", async ({ request }) => {
  expect(fieldsOf(await expectProblem(await request.get("/api/v1/tasks?limit=0"), 400, "validation-failed"))).toEqual([
    "limit",
  ]);
  expect(fieldsOf(await expectProblem(await request.get("/api/v1/tasks?limit=abc"), 400, "validation-failed"))).toEqual(
    ["limit"],
  );
  expect(fieldsOf(await expectProblem(await request.get("/api/v1/tasks?sort=asc"), 400, "validation-failed"))).toEqual([
    "sort",
  ]);
  expect(
    fieldsOf(await expectProblem(await request.get("/api/v1/tasks?cursor=garbage"), 400, "validation-failed")),
  ).toEqual(["cursor"]);
  expect(
    fieldsOf(await expectProblem(await request.get("/api/v1/tasks?limit=1&limit=2"), 400, "validation-failed")),
  ).toEqual(["limit"]);
});

test("the transition log pages by after_version", async ({ request }) => {
  const api = new AgentApi(request);
  // Another task's history must not show up in this task's log.
  await api.drive(await api.createAgentTask(), ["PLANNING", "READY", "RUNNING", "WAITING_FOR_TOOL"]);
  const task = await api.createAgentTask();
  await api.drive(task, ["PLANNING", "READY", "RUNNING"]);

  const first = (await (await api.log(task.id, "?limit=2")).json()) as {
    items: TransitionBody[];
    next_after_version: number | null;
  };
  expect(first.items.map((t) => t.to_version)).toEqual([1, 2]);
  expect(first.next_after_version).toBe(2);
  const second = (await (
    await api.log(task.id, `?limit=2&after_version=${first.next_after_version}`)
  ).json()) as typeof first;
  expect(second.items.map((t) => t.to_version)).toEqual([3, 4]);
  expect(second.next_after_version).toBeNull();
  expect(second.items.every((t) => t.task_id === task.id)).toBe(true);

  expect(fieldsOf(await expectProblem(await api.log(task.id, "?after_version=-1"), 400, "validation-failed"))).toEqual([
    "after_version",
  ]);
});

test("GET /tasks/{id}/next lists the agent's next transitions with what blocks each", async ({ request }) => {
  const api = new AgentApi(request);
  const agentTask = await api.createAgentTask();
  const next = (await (await request.get(`/api/v1/tasks/${agentTask.id}/next`)).json()) as {
    status: string;
    version: number;
    terminal: boolean;
    steps: Array<{ to: string; allowed: boolean; blocked_by: Array<{ invariant: string }> }>;
  };
  expect(next).toMatchObject({ status: "RECEIVED", version: 1, terminal: false });
  expect(next.steps.map((s) => s.to).sort()).toEqual(["CANCELLED", "PLANNING"]);
  expect(next.steps.every((s) => s.allowed && s.blocked_by.length === 0)).toBe(true);

  const delivery = await api.createDeliveryTask();
  const res = await request.get(`/api/v1/tasks/${delivery.id}/next`);
  expect(res.headers()["etag"]).toBe('"1"');
  const steps = ((await res.json()) as typeof next).steps;
  const implementing = steps.find((s) => s.to === "implementing");
  expect(implementing?.allowed).toBe(false);
  expect(implementing?.blocked_by.map((b) => b.invariant)).toContain("gate_required");
  expect(steps.find((s) => s.to === "cancelled")?.allowed).toBe(true);

  const cancelled = await api.step(delivery, { to: "cancelled" });
  const after = (await (await request.get(`/api/v1/tasks/${cancelled.id}/next`)).json()) as typeof next;
  expect(after).toMatchObject({ status: "cancelled", terminal: true, steps: [] });
});

test("GET /workflows lists the registry's versions with digests; tasks are pinned to one", async ({ request }) => {
  const api = new AgentApi(request);
  const res = await request.get("/api/v1/workflows");
  expect(res.status()).toBe(200);
  const { items } = (await res.json()) as {
    items: Array<{
      name: string;
      version: number;
      digest: string;
      built_in: boolean;
      definition: {
        initial: string;
        states: Record<string, { terminal?: boolean }>;
        transitions: Array<{ from: string; to: string; by: string[] }>;
      };
    }>;
  };
  // Every shipped version is registered: tasks pinned to an old digest still run under it.
  expect(
    items
      .filter((w) => w.built_in)
      .map((w) => `${w.name} v${w.version}`)
      .sort(),
  ).toEqual(["agent-task v1", "agent-task v2", "delivery v1", "delivery v2"]);
  for (const w of items) expect(w.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  // New tasks are created under the newest version.
  const agentTask = items.filter((w) => w.name === "agent-task").sort((a, b) => b.version - a.version)[0]!;
  expect(agentTask.definition.initial).toBe("RECEIVED");
  expect(agentTask.definition.states.COMPLETED?.terminal).toBe(true);
  expect(agentTask.definition.transitions).toContainEqual(
    expect.objectContaining({ from: "VALIDATING", to: "COMPLETED" }),
  );

  const task = await api.createAgentTask();
  expect(task.workflow.digest).toBe(agentTask.digest);

  const one = await request.get("/api/v1/workflows/delivery");
  expect(one.status()).toBe(200);
  expect(((await one.json()) as { name: string }).name).toBe("delivery");
  await expectProblem(await request.get("/api/v1/workflows/nope"), 404, "not-found");
  await expectProblem(await request.get("/api/v1/workflows/delivery?version=99"), 404, "not-found");
});

test("GET /openapi.json is an OpenAPI 3.1 document of every path, public", async ({ playwright, baseURL }) => {
  const anonymous = await playwright.request.newContext({ baseURL, extraHTTPHeaders: {} });
  try {
    const res = await anonymous.get("/api/v1/openapi.json");
    expect(res.status()).toBe(200);
    const doc = JSON.parse(await res.text()) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: {
        securitySchemes: Record<string, { type: string; scheme: string }>;
        schemas: Record<string, { properties?: Record<string, unknown> }>;
      };
      security: unknown[];
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/api/v1/openapi.json",
        "/api/v1/tasks",
        "/api/v1/tasks/{id}",
        "/api/v1/tasks/{id}/next",
        "/api/v1/tasks/{id}/transitions",
        "/api/v1/tools",
        "/api/v1/tools/{name}",
        "/api/v1/tools/{name}/lookups/claim",
        "/api/v1/tools/{name}/retire",
        "/api/v1/tasks/{id}/executions",
        "/api/v1/tasks/{id}/tool-calls",
        "/api/v1/executions/{id}",
        "/api/v1/executions/{id}/sent",
        "/api/v1/lookups/{id}/answer",
        "/api/v1/retention/policies",
        "/api/v1/retention/policies/{class}",
        "/api/v1/executions/{id}/outcome",
        "/api/v1/tasks/{id}/lease",
        "/api/v1/tasks/{id}/lease/renew",
        "/api/v1/tasks/{id}/lease/release",
        "/api/v1/events",
        "/api/v1/events/sandbox",
        "/api/v1/events/stripe",
        "/api/v1/workflows",
        "/api/v1/workflows/{name}",
        "/api/v1/workflows/{name}/versions/{version}",
        "/api/v1/workflows/migrations/plan",
        "/api/v1/workflows/migrations",
        "/api/v1/tasks/{id}/checkpoints",
        "/api/v1/tasks/{id}/checkpoints/restores",
        "/api/v1/checkpoints/{id}",
        "/api/v1/checkpoints/{id}/restore-plan",
        "/api/v1/checkpoints/{id}/restore",
        "/api/v1/audit/entries",
        "/api/v1/audit/entries/{id}/annotations",
        "/api/v1/audit/export",
        "/api/v1/audit/search",
        "/api/v1/audit/verify",
        "/api/v1/alerts",
        "/api/v1/alerts/{id}",
        "/api/v1/alerts/{id}/acknowledge",
        "/api/v1/alerts/{id}/escalate",
        "/api/v1/alerts/{id}/reconcile",
        "/api/v1/alerts/{id}/resolve",
        "/api/v1/monitor/runs",
        "/api/v1/tasks/{id}/instructions",
        "/api/v1/tasks/{id}/delegations",
        "/api/v1/tasks/{id}/delegations/{delegationId}",
        "/api/v1/graph/threads",
        "/api/v1/graph/checkpoints",
        "/api/v1/graph/writes",
      ].sort(),
    );
    expect(Object.keys(doc.paths["/api/v1/tasks/{id}/transitions"]!).sort()).toEqual(["get", "post"]);
    expect(doc.paths["/api/v1/tasks/{id}/transitions"]!.post!.responses).toHaveProperty("422");
    expect(Object.keys(doc.paths["/api/v1/audit/verify"]!).sort()).toEqual(["get", "post"]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const name of [
      "Task",
      "TaskState",
      "Transition",
      "TransitionRequest",
      "CreateTaskRequest",
      "Problem",
      "WorkflowVersion",
      "WorkflowDefinition",
      "NextSteps",
    ]) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
    expect(Object.keys(doc.components.schemas.TransitionRequest!.properties!).sort()).toEqual([
      "expected_version",
      "fencing_token",
      "patch",
      "reason",
      "to",
      "transition_id",
    ]);
    // Every $ref resolves inside the document.
    const text = JSON.stringify(doc);
    const refs = Array.from(
      text.matchAll(/"\$ref":"#\/components\/(schemas|responses)\/([^"]+)"/g),
      (m) => [m[1]!, m[2]!] as const,
    );
    expect(refs.length).toBeGreaterThan(10);
    for (const [kind, name] of refs) {
      expect(
        (doc.components as unknown as Record<string, Record<string, unknown>>)[kind],
        `${kind}/${name}`,
      ).toHaveProperty(name);
    }
  } finally {
    await anonymous.dispose();
  }
});
