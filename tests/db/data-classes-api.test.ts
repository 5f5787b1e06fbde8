import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import { MASKED_VALUE } from "@/lib/model/data-classes";
import type { Principal } from "@/lib/model/permissions";
import { documentOf, rememberWorkflowDefinition, workflowDefinitions } from "@/lib/model/workflows";
import { defineWorkflow } from "@/lib/model/workflows/workflow-definition";
import { issueApiToken } from "@/lib/stores/api-tokens";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { maskTaskForReader } from "@/lib/use-cases/data-classes/mask-for-reader";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as taskRoute from "@/app/api/v1/tasks/[id]/route";
import * as transitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import * as taskExecutionsRoute from "@/app/api/v1/tasks/[id]/executions/route";
import * as executionRoute from "@/app/api/v1/executions/[id]/route";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { callRoute as call, serveRoutesFrom } from "@/tests/helpers/route-call";

/**
 * Data classes through the real route handlers: a refund's customer is
 * restricted (lib/model/tools/built-in-tools.ts), so an agent whose token
 * has no read_restricted scope reads "[restricted]" in every answer that
 * carries the request (the intent's answer, the execution, the task's
 * ledger) and is told which pointers were masked; a token with the scope
 * reads the customer. The amount, an internal field, shows to both.
 */
let t: TestDatabase;
const tokens = {} as Record<"plain" | "cleared", string>;
const system = { identity: "system:test", kind: "system" } as const;
const everything: AgentScopes = { workflows: "*", tools: "*", take_over_leases: false };
const refund = { amount_cents: 2500, currency: "usd", charge_id: "ch_dc_1", customer_id: "cus_classified_42" };

beforeAll(async () => {
  t = await openTestPglite();
  serveRoutesFrom(t);
  const token = async (name: string, scopes: AgentScopes) =>
    (
      await issueApiToken(
        t.db,
        { name, identity: `spiffe://verity.local/agent/${name}`, role: "agent", scopes },
        system,
      )
    ).token;
  tokens.plain = await token("plain-bot", everything);
  tokens.cleared = await token("cleared-bot", { ...everything, read_restricted: true });
});
afterAll(async () => {
  serveRoutesFrom(undefined);
  await t?.close();
});

/** A refund intent recorded by `token`'s agent on a task of its own (an agent reaches only the tasks it drives). */
async function refundIntent(
  token: string = tokens.plain,
): Promise<{ taskId: string; status: number; body: Record<string, unknown> }> {
  const created = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
    token,
    body: { workflow: "agent-task", intent_id: `dc-${Date.now()}-${Math.random()}` },
  });
  expect(created.status).toBe(201);
  const taskId = created.body.id as string;
  let version = created.body.version as number;
  for (const to of ["PLANNING", "READY", "RUNNING"]) {
    const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/transitions`, {
      token,
      params: { id: taskId },
      body: { to, expected_version: version },
    });
    expect(moved.status).toBe(200);
    version = (moved.body.task as { version: number }).version;
  }
  const intent = await call(taskExecutionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/executions`, {
    token,
    params: { id: taskId },
    body: { tool_call_id: "refund-1", tool: "payments.refund", request: refund, expected_version: version },
  });
  return { taskId, ...intent };
}

describe("restricted fields through the API", () => {
  it("masks a refund's customer for a token without clearance, everywhere the request travels, and names the pointer", async () => {
    const { taskId, status, body } = await refundIntent();
    expect(status).toBe(201);
    const execution = body.execution as { id: string; request: Record<string, unknown>; masked_fields: string[] };
    expect(execution.request).toEqual({ ...refund, customer_id: MASKED_VALUE });
    expect(execution.masked_fields).toEqual(["/request/customer_id"]);

    const read = await call(executionRoute.GET, "GET", `/api/v1/executions/${execution.id}`, {
      token: tokens.plain,
      params: { id: execution.id },
    });
    expect(read.status).toBe(200);
    expect(read.body.request).toEqual({ ...refund, customer_id: MASKED_VALUE });
    expect(read.body.masked_fields).toEqual(["/request/customer_id"]);
    expect(JSON.stringify(read.body)).not.toContain(refund.customer_id);

    const ledger = await call(taskExecutionsRoute.GET, "GET", `/api/v1/tasks/${taskId}/executions`, {
      token: tokens.plain,
      params: { id: taskId },
    });
    expect(JSON.stringify(ledger.body)).not.toContain(refund.customer_id);
    expect((ledger.body.items as Array<{ masked_fields: string[] }>)[0]?.masked_fields).toEqual([
      "/request/customer_id",
    ]);
  });

  it("shows the customer to a token with the read_restricted scope, with nothing masked", async () => {
    const { taskId, body } = await refundIntent(tokens.cleared);
    expect((body.execution as { request: unknown }).request).toEqual(refund);
    const id = (body.execution as { id: string }).id;
    const read = await call(executionRoute.GET, "GET", `/api/v1/executions/${id}`, {
      token: tokens.cleared,
      params: { id },
    });
    expect(read.status).toBe(200);
    expect(read.body.request).toEqual(refund);
    expect(read.body.masked_fields).toEqual([]);
    const task = await call(taskRoute.GET, "GET", `/api/v1/tasks/${taskId}`, {
      token: tokens.cleared,
      params: { id: taskId },
    });
    expect(task.body.masked_fields).toEqual([]);
  });
});

describe("restricted task state under a workflow's declaration", () => {
  const person = (role: Principal["role"]): Principal => ({
    kind: "user",
    id: role,
    identity: `spiffe://verity.local/user/${role}`,
    role,
    displayName: role,
    tenantId: "default",
  });

  it("masks the declared artifact for an auditor and an engineer, not for an operator or an admin", async () => {
    const base = documentOf(workflowDefinitions.find((d) => d.name === "agent-task" && d.version === 2)!);
    const declared = defineWorkflow({
      ...base,
      version: 902,
      data_classes: { "/artifacts/review_report": "restricted" },
    });
    rememberWorkflowDefinition(documentOf(declared), declared.digest);
    const { taskId } = await refundIntent();
    const task = await getTaskOrThrow(t.db, taskId);
    const underDeclaration = {
      ...task,
      workflow: { ...task.workflow, version: 902, digest: declared.digest },
      state: { ...task.state, artifacts: { review_report: "the customer is Jane Roe", test_results: "ok" } },
    };
    for (const role of ["auditor", "engineer"] as const) {
      const seen = maskTaskForReader(person(role), underDeclaration);
      expect(seen.value.state.artifacts).toEqual({ review_report: MASKED_VALUE, test_results: "ok" });
      expect(seen.maskedFields).toEqual(["/state/artifacts/review_report"]);
    }
    for (const role of ["operator", "admin"] as const) {
      const seen = maskTaskForReader(person(role), underDeclaration);
      expect(seen.value.state.artifacts.review_report).toBe("the customer is Jane Roe");
      expect(seen.maskedFields).toEqual([]);
    }
    // An agent never by role: only by its token's scope.
    const agent: Principal = { ...person("agent"), kind: "agent", scopes: everything };
    expect(maskTaskForReader(agent, underDeclaration).maskedFields).toEqual(["/state/artifacts/review_report"]);
    expect(
      maskTaskForReader({ ...agent, scopes: { ...everything, read_restricted: true } }, underDeclaration).maskedFields,
    ).toEqual([]);
  });
});
