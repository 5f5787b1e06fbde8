import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentScopes } from "@/lib/model/agent-scopes";
import { MASKED_VALUE } from "@/lib/model/data-classes";
import type { Principal } from "@/lib/model/permissions";
import { documentOf, rememberWorkflowDefinition, workflowDefinitions } from "@/lib/model/workflows";
import { defineWorkflow } from "@/lib/model/workflows/workflow-definition";
import { issueApiToken } from "@/lib/stores/api-tokens";
import { getTaskOrThrow } from "@/lib/use-cases/tasks/task-queries";
import { maskRestorePlanForReader, maskTaskForReader } from "@/lib/use-cases/data-classes/mask-for-reader";
import * as tasksRoute from "@/app/api/v1/tasks/route";
import * as taskRoute from "@/app/api/v1/tasks/[id]/route";
import * as transitionsRoute from "@/app/api/v1/tasks/[id]/transitions/route";
import * as taskExecutionsRoute from "@/app/api/v1/tasks/[id]/executions/route";
import * as executionRoute from "@/app/api/v1/executions/[id]/route";
import { openTestPglite, type TestDatabase } from "@/tests/helpers/pglite";
import { callRoute as call, serveRoutesFrom } from "@/tests/helpers/route-call";
import { isSealed } from "@/lib/core/envelope-encryption";
import { publishWorkflow } from "@/lib/use-cases/workflows/publish-workflow";
import { createCheckpoint } from "@/lib/use-cases/checkpoints/create-checkpoint";
import { planRestore } from "@/lib/use-cases/checkpoints/plan-restore";
import { restoreCheckpoint } from "@/lib/use-cases/checkpoints/restore-checkpoint";
import { loadTaskDetail } from "@/lib/adapters/console/tasks/task-detail";
import { loadCheckpointInspector, loadTaskCheckpoints } from "@/lib/adapters/console/checkpoints/checkpoints";

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

describe("restricted task state, sealed and masked on the console's pages and in a restore plan", () => {
  const reader = (role: Principal["role"]): Principal => ({
    kind: "user",
    id: role,
    identity: `spiffe://verity.local/user/${role}`,
    role,
    displayName: role,
    tenantId: "default",
  });
  const engineer = { identity: "spiffe://verity.local/user/engineer", kind: "user" } as const;
  const secret = "Jane Roe";

  it("masks a declared restricted artifact and subtask title on the task page, the checkpoints pages and a restore plan, and seals them at rest", async () => {
    const agentTask = documentOf(workflowDefinitions.find((d) => d.name === "agent-task" && d.version === 2)!);
    const published = await publishWorkflow(
      t.db,
      {
        ...agentTask,
        name: "classified-task",
        version: 1,
        data_classes: { "/artifacts/review_report": "restricted", "/subtasks/*/title": "restricted" },
      },
      system,
    );
    expect(published).toBeTruthy();
    const created = await call(tasksRoute.POST, "POST", "/api/v1/tasks", {
      token: tokens.plain,
      body: { workflow: "classified-task", intent_id: "classified" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const taskId = created.body.id as string;
    let version = created.body.version as number;
    const move = async (body: Record<string, unknown>) => {
      const moved = await call(transitionsRoute.POST, "POST", `/api/v1/tasks/${taskId}/transitions`, {
        token: tokens.plain,
        params: { id: taskId },
        body: { ...body, expected_version: version },
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      version = (moved.body.task as { version: number }).version;
    };
    for (const to of ["PLANNING", "READY", "RUNNING"]) await move({ to });
    await move({
      patch: {
        artifacts: { review_report: `the customer is ${secret}` },
        subtasks: [{ id: "phone", title: `Phone ${secret}`, mandatory: false }],
      },
    });
    const { checkpoint } = await createCheckpoint(t.db, taskId, { expected_version: version }, engineer);
    await move({ patch: { artifacts: { review_report: `second report on ${secret}` } } });

    // Restricted values are sealed at rest like confidential ones.
    const [row] = await t.sql<{ state: { artifacts: { review_report: unknown } } }>(
      "SELECT state FROM tasks WHERE id = $1",
      [taskId],
    );
    expect(isSealed(row!.state.artifacts.review_report)).toBe(true);

    const auditor = reader("auditor");
    const page = await loadTaskDetail(t.db, taskId, auditor);
    expect(page?.task.state.artifacts.review_report).toBe(MASKED_VALUE);
    expect(page?.task.state.subtasks[0]?.title).toBe(MASKED_VALUE);
    expect(page?.maskedFields).toEqual(
      expect.arrayContaining([
        "/state/artifacts/review_report",
        "/state/subtasks/0/title",
        "/transitions/0/patch/artifacts/review_report",
      ]),
    );
    expect(JSON.stringify(page?.task)).not.toContain(secret);
    expect(JSON.stringify(page?.transitions)).not.toContain(secret);
    const operatorPage = await loadTaskDetail(t.db, taskId, reader("operator"));
    expect(operatorPage?.task.state.artifacts.review_report).toBe(`second report on ${secret}`);
    expect(operatorPage?.maskedFields).toEqual([]);

    const inspector = await loadCheckpointInspector(t.db, checkpoint.id, auditor);
    expect(JSON.stringify(inspector?.detail)).not.toContain(secret);
    expect(inspector?.maskedFields).toEqual(
      expect.arrayContaining(["/document/state_snapshot/artifacts/review_report"]),
    );

    // A rewind plan: its resulting state and its diff quote both reports.
    const plan = await planRestore(t.db, checkpoint.id, { rewind: true }, engineer);
    expect(JSON.stringify(plan)).toContain(secret);
    const seen = maskRestorePlanForReader(reader("engineer"), plan, plan.reauthorization.workflow.currentDigest);
    expect(JSON.stringify(seen.value)).not.toContain(secret);
    expect(seen.value.resultingState?.artifacts.review_report).toBe(MASKED_VALUE);
    expect(seen.maskedFields).toEqual(
      expect.arrayContaining(["/resulting_state/artifacts/review_report", "/resulting_state/subtasks/0/title"]),
    );
    expect(seen.maskedFields.some((p) => p.startsWith("/diff/"))).toBe(true);
    expect(
      maskRestorePlanForReader(reader("operator"), plan, plan.reauthorization.workflow.currentDigest).maskedFields,
    ).toEqual([]);

    // Applied: the attempt keeps its diff sealed, and the checkpoints page shows it masked.
    await restoreCheckpoint(
      t.db,
      checkpoint.id,
      { expected_version: version, rewind: true, reason: "back to the first report" },
      engineer,
    );
    const [kept] = await t.sql<{ plan: { diff: unknown } }>("SELECT plan FROM checkpoint_restores WHERE task_id = $1", [
      taskId,
    ]);
    expect(isSealed(kept!.plan.diff)).toBe(true);
    const checkpoints = await loadTaskCheckpoints(t.db, taskId, auditor);
    expect(JSON.stringify(checkpoints?.task)).not.toContain(secret);
    expect(JSON.stringify(checkpoints?.restores)).not.toContain(secret);
    expect(checkpoints?.maskedFields).toEqual(
      expect.arrayContaining(["/task/state/artifacts/review_report", "/restores/0/plan/diff/0/before"]),
    );
    const cleared = await loadTaskCheckpoints(t.db, taskId, reader("admin"));
    expect(JSON.stringify(cleared?.restores)).toContain(secret);
  });
});
