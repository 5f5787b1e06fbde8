import { expect, test, type Page } from "@playwright/test";
import { getLookupSecret } from "@/lib/config/env";
import { lookupServer, type LookupMode } from "@/tests/helpers/lookup-server";
import { AgentApi, authHeaders, expectProblem, uniqueId, type Problem, type TaskBody } from "./agent-api";
import { AgentsPage } from "../pages/agents-page";
import { ReviewDetailPage, ReviewQueuePage } from "../pages/reviews-page";
import { signIn, signedInRequest } from "../pages/login-page";

/**
 * The tool registry over HTTP: an admin (the console session) registers a
 * tool, a new version of it, retires it; bad definitions are 422 with every
 * problem at its JSON path; an agent without the publish scope is refused,
 * one with it registers; and a registered tool is called end to end by an
 * agent over the API, its request checked against the registered schema.
 */

interface ToolVersionBody {
  definition: Record<string, unknown> & { name: string; version: number };
  name: string;
  version: number;
  digest: string;
  built_in: boolean;
  registered_by: string;
  retired_at: string | null;
}
type DefinitionProblem = Problem & { problems?: Array<{ path: string; message: string }> };

/** A reversible CRM-like tool of this run's own, reconciled by people (nothing irreversible hangs on it). */
function ticketTool(name: string) {
  return {
    name,
    version: 1,
    description: "Open a ticket in the team's tracker",
    irreversible: false,
    request_schema: {
      type: "object",
      additionalProperties: false,
      required: ["title", "priority"],
      properties: {
        title: { type: "string", minLength: 1, maxLength: 200 },
        priority: { type: "string", enum: ["low", "high"] },
      },
    },
    topic: "tickets",
    idempotency_window_seconds: 86_400,
    identity_fields: ["/title"],
    max_attempts: 2,
    reconciliation: { method: "manual" },
  };
}

const toolName = () =>
  uniqueId("e2e.tickets")
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, "-");

/** An agent created in the console: every workflow, the tools given (or every tool), optionally the publish scope for tools. */
async function agentToken(
  page: Page,
  options: { publish: boolean; everyTool: boolean; tools?: string[] },
): Promise<string> {
  await signIn(page, "admin", "/admin/agents");
  const agents = new AgentsPage(page);
  await agents.fillCreate({
    name: uniqueId("tools").toLowerCase(),
    workflows: [],
    // Registered tools are offered beside the built-ins.
    tools: options.tools ?? [],
    publish: options.publish ? ["tools"] : [],
  });
  await agents.createForm.getByLabel("Every workflow, including ones added later").check();
  if (options.everyTool) await agents.createForm.getByLabel("Every tool, including ones added later").check();
  await agents.submitCreate();
  return (await agents.shownToken(agents.createForm)).secret;
}

test("an admin registers a tool, a new version and retires it; versions are immutable", async ({
  playwright,
  baseURL,
}) => {
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const def = ticketTool(toolName());
  const created = await admin.post("/api/v1/tools", { data: def });
  expect(created.status(), await created.text()).toBe(201);
  const v1 = (await created.json()) as ToolVersionBody;
  expect(v1).toMatchObject({
    name: def.name,
    version: 1,
    built_in: false,
    registered_by: "spiffe://verity.local/user/admin",
  });
  expect(v1.definition).toEqual(def);

  const replay = await admin.post("/api/v1/tools", { data: def });
  expect(replay.status()).toBe(200);
  expect(replay.headers()["idempotent-replayed"]).toBe("true");
  await expectProblem(
    await admin.post("/api/v1/tools", { data: { ...def, description: "Other words" } }),
    409,
    "idempotency-conflict",
  );

  // Fetch → edit → register: `definition` is exactly what POST accepts.
  const fetched = (await (await admin.get(`/api/v1/tools/${def.name}`)).json()) as { newest: ToolVersionBody };
  const v2res = await admin.post("/api/v1/tools", {
    data: { ...fetched.newest.definition, version: 2, max_attempts: 3 },
  });
  expect(v2res.status(), await v2res.text()).toBe(201);
  const detail = (await (await admin.get(`/api/v1/tools/${def.name}`)).json()) as {
    versions: ToolVersionBody[];
    retired: boolean;
  };
  expect(detail.versions.map((v) => v.version)).toEqual([2, 1]);
  expect(detail.retired).toBe(false);

  const listed = (await (await admin.get("/api/v1/tools")).json()) as {
    items: Array<{ name: string; newest: ToolVersionBody }>;
  };
  expect(listed.items.map((t) => t.name)).toEqual(
    expect.arrayContaining(["payments.refund", "crm.add_note", def.name]),
  );
  expect(listed.items.find((t) => t.name === "payments.refund")?.newest.built_in).toBe(true);

  await expectProblem(await admin.post(`/api/v1/tools/${def.name}/retire`, { data: {} }), 400, "validation-failed");
  const retired = await admin.post(`/api/v1/tools/${def.name}/retire`, {
    data: { reason: "moved to the new tracker" },
  });
  expect(retired.status(), await retired.text()).toBe(200);
  const after = (await retired.json()) as { retired: boolean; versions: ToolVersionBody[] };
  expect(after.retired).toBe(true);
  expect(after.versions.every((v) => v.retired_at !== null)).toBe(true);
  await expectProblem(await admin.get("/api/v1/tools/e2e.nobody-registered-this"), 404, "not-found");
  await admin.dispose();
});

test("bad definitions: 422 listing every problem at its JSON path; a built-in's name is taken", async ({
  playwright,
  baseURL,
}) => {
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const def = ticketTool(toolName());
  const shape = (await expectProblem(
    await admin.post("/api/v1/tools", {
      data: { ...def, version: 0, colour: "red", reconciliation: { method: "http" } },
    }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(shape.problems?.map((p) => p.path).sort()).toEqual(["$.colour", "$.reconciliation.url", "$.version"]);
  const meaning = (await expectProblem(
    await admin.post("/api/v1/tools", {
      data: {
        ...def,
        irreversible: true,
        identity_fields: ["/title", "/assignee"],
        amount: { amount_pointer: "/title", currency_pointer: "/currency" },
        compensating_tool: "e2e.no-such-tool",
        request_schema: {
          ...def.request_schema,
          properties: { ...def.request_schema.properties, priority: { type: "strnig" } },
        },
      },
    }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(meaning.problems?.map((p) => p.path)).toEqual([
    "$.request_schema.properties.priority.type",
    "$.compensating_tool",
  ]);
  const fixedSchema = (await expectProblem(
    await admin.post("/api/v1/tools", {
      data: {
        ...def,
        irreversible: true,
        identity_fields: ["/title", "/assignee"],
        amount: { amount_pointer: "/title", currency_pointer: "/currency" },
      },
    }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(fixedSchema.problems?.map((p) => p.path)).toEqual([
    "$.amount.amount_pointer",
    "$.amount.currency_pointer",
    "$.identity_fields[1]",
  ]);
  expect(fixedSchema.errors?.map((e) => e.field)).toContain("$.identity_fields[1]");
  const taken = (await expectProblem(
    await admin.post("/api/v1/tools", { data: { ...def, name: "payments.refund" } }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(taken.problems?.map((p) => p.path)).toEqual(["$.name"]);
  await admin.dispose();
});

test("an agent without the publish scope is refused naming it; one with it registers", async ({ page, request }) => {
  const def = ticketTool(toolName());
  const refused = await expectProblem(
    await request.post("/api/v1/tools", { data: def, headers: authHeaders }),
    403,
    "forbidden",
  );
  expect(refused).toMatchObject({ scope: "publish", registry: "tools" });
  await expectProblem(
    await request.post(`/api/v1/tools/crm.add_note/retire`, { data: { reason: "x" }, headers: authHeaders }),
    403,
    "forbidden",
  );
  const ci = await agentToken(page, { publish: true, everyTool: false });
  const ok = await request.post("/api/v1/tools", { data: def, headers: { Authorization: `Bearer ${ci}` } });
  expect(ok.status(), await ok.text()).toBe(201);
  expect(((await ok.json()) as ToolVersionBody).registered_by).toMatch(/^spiffe:\/\/verity\.local\/agent\//);
});

test("a registered tool called end to end over HTTP: its schema checks the request, a retired tool takes no new intents", async ({
  page,
  playwright,
  baseURL,
}) => {
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const def = ticketTool(toolName());
  expect((await admin.post("/api/v1/tools", { data: def })).status()).toBe(201);
  const token = await agentToken(page, { publish: false, everyTool: true });
  const agentContext = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
  });
  const api = new AgentApi(agentContext);
  let task: TaskBody = await api.drive(await api.createAgentTask(), ["PLANNING", "READY", "RUNNING"]);

  const intentPath = `/api/v1/tasks/${task.id}/executions`;
  const bad = await expectProblem(
    await agentContext.post(intentPath, {
      data: {
        tool_call_id: "ticket-1",
        tool: def.name,
        request: { title: "", priority: "urgent", extra: 1 },
        expected_version: task.version,
      },
    }),
    400,
    "validation-failed",
  );
  expect(bad.errors?.map((e) => e.field).sort()).toEqual(["request.extra", "request.priority", "request.title"]);

  const intent = await agentContext.post(intentPath, {
    data: {
      tool_call_id: "ticket-1",
      tool: def.name,
      request: { title: "Printer on fire", priority: "high" },
      expected_version: task.version,
    },
  });
  expect(intent.status(), await intent.text()).toBe(201);
  const proceed = (await intent.json()) as {
    kind: string;
    execution: { id: string; attempt_id: string; tool_version: number; irreversible: boolean };
  };
  expect(proceed).toMatchObject({ kind: "proceed", execution: { tool_version: 1, irreversible: false } });
  const sent = await agentContext.post(`/api/v1/executions/${proceed.execution.id}/sent`, {
    data: { attempt_id: proceed.execution.attempt_id },
  });
  expect(sent.status(), await sent.text()).toBe(200);
  const outcome = await agentContext.post(`/api/v1/executions/${proceed.execution.id}/outcome`, {
    data: {
      attempt_id: proceed.execution.attempt_id,
      outcome: "succeeded",
      evidence: { execution_id: proceed.execution.id, ticket: "T-1" },
      next_status: "RUNNING",
    },
  });
  expect(outcome.status(), await outcome.text()).toBe(200);
  task = await api.task(task.id);
  expect(task.status).toBe("RUNNING");

  expect(
    (await admin.post(`/api/v1/tools/${def.name}/retire`, { data: { reason: "tracker replaced" } })).status(),
  ).toBe(200);
  const retired = await expectProblem(
    await agentContext.post(intentPath, {
      data: {
        tool_call_id: "ticket-2",
        tool: def.name,
        request: { title: "Another", priority: "low" },
        expected_version: task.version,
      },
    }),
    422,
    "invariant-violated",
  );
  expect(retired.violations?.map((v) => v.invariant)).toEqual(["tool_not_retired"]);
  await agentContext.dispose();
  await admin.dispose();
});

test("compensation: an operator accepts the provider's record and compensates it in the review; the agent sends the compensation under its own key", async ({
  page,
  playwright,
  baseURL,
  browser,
}) => {
  test.setTimeout(180_000);
  // The owner's endpoint, signing with the server's lookup secret (the data folder's, as the server reads it).
  const modes = new Map<string, LookupMode>();
  const owner = await lookupServer(getLookupSecret(), modes);
  const admin = await signedInRequest(playwright, baseURL, "admin");
  const payoutName = toolName().replace("tickets", "payout");
  const undoName = `${payoutName}.undo`;
  const schema = {
    type: "object",
    additionalProperties: false,
    required: ["amount_minor", "currency", "payee"],
    properties: {
      amount_minor: { type: "integer", minimum: 1 },
      currency: { type: "string", pattern: "^[a-z]{3}$" },
      payee: { type: "string", minLength: 1 },
    },
  };
  const common = {
    version: 1,
    irreversible: true,
    topic: "payout",
    idempotency_window_seconds: 86_400,
    identity_fields: ["/amount_minor", "/currency", "/payee"],
    max_attempts: 2,
    reconciliation: { method: "http", url: owner.url },
  };
  const undo = {
    ...common,
    name: undoName,
    description: "Claw a payout back",
    request_schema: {
      ...schema,
      required: [...schema.required, "payout_id"],
      properties: { ...schema.properties, payout_id: { type: "string", minLength: 1 } },
    },
  };
  const payoutTool = {
    ...common,
    name: payoutName,
    description: "Send a payout",
    request_schema: schema,
    compensating_tool: undoName,
    compensation_request: {
      amount_minor: "/request/amount_minor",
      currency: "/request/currency",
      payee: "/request/payee",
      payout_id: "/result/id",
    },
  };
  // The compensating tool first: a definition may name only a registered one.
  const early = (await expectProblem(
    await admin.post("/api/v1/tools", { data: payoutTool }),
    422,
    "definition-invalid",
  )) as DefinitionProblem;
  expect(early.problems?.map((p) => p.path)).toEqual(["$.compensating_tool"]);
  expect((await admin.post("/api/v1/tools", { data: undo })).status()).toBe(201);
  expect((await admin.post("/api/v1/tools", { data: payoutTool })).status()).toBe(201);

  // Scoped to exactly the two registered tools, picked in the console like any tool.
  const token = await agentToken(page, { publish: false, everyTool: false, tools: [payoutName, undoName] });
  const agentContext = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
  });
  const api = new AgentApi(agentContext);
  const task: TaskBody = await api.drive(await api.createAgentTask(), ["PLANNING", "READY", "RUNNING"]);
  const payout = { amount_minor: 4200, currency: "eur", payee: "acct_closed" };
  const intent = await agentContext.post(`/api/v1/tasks/${task.id}/executions`, {
    data: { tool_call_id: "payout-1", tool: payoutName, request: payout, expected_version: task.version },
  });
  expect(intent.status(), await intent.text()).toBe(201);
  const call = ((await intent.json()) as { execution: { id: string; attempt_id: string; idempotency_key: string } })
    .execution;
  // The call leaves, its answer is lost: unknown, and the owner cannot say either, so a person decides.
  modes.set(call.idempotency_key, { kind: "unknown" });
  expect(
    (await agentContext.post(`/api/v1/executions/${call.id}/sent`, { data: { attempt_id: call.attempt_id } })).status(),
  ).toBe(200);
  const lost = await agentContext.post(`/api/v1/executions/${call.id}/outcome`, {
    data: { attempt_id: call.attempt_id, outcome: "unknown", error: "the connection dropped" },
  });
  expect(lost.status(), await lost.text()).toBe(200);
  await expect
    .poll(async () => (await (await agentContext.get(`/api/v1/executions/${call.id}`)).json()).status, {
      timeout: 60_000,
    })
    .toBe("NEEDS_HUMAN");
  // Now the owner finds the payout: it was made, to an account that is closed. It takes two seconds to say so (the page waits up to four).
  modes.set(call.idempotency_key, { kind: "delayed", ms: 2_000, then: { kind: "found" } });

  const context = await browser.newContext();
  const operator = await context.newPage();
  await signIn(operator, "operator", "/reviews");
  const queue = new ReviewQueuePage(operator);
  await queue.open(task.id);
  const review = new ReviewDetailPage(operator);
  // The operator writes the reason while the provider is still being asked; the answer must not take it away
  // (the panel sat inside the answer's suspense boundary and was replaced, with what was typed, when it came).
  await expect(review.lookup).toContainText("Asking…");
  const reason = "paid to a closed account: claw it back";
  await review.reason.fill(reason);
  await expect(review.lookup).toContainText(`po_${call.id}`, { timeout: 30_000 });
  await expect(review.button("Accept evidence & compensate")).toBeVisible();
  await expect(review.panel).toContainText(`Compensating tool: ${undoName}`);
  await expect(review.reason).toHaveValue(reason);
  await review.button("Accept evidence & compensate").click();
  await expect(review.done).toContainText("recorded its compensation", { timeout: 30_000 });
  await expect(review.status).toContainText("APPROVED");
  await context.close();

  // The agent finds the compensation in its ledger, released to it, and sends it as recorded.
  const ledger = (await (await agentContext.get(`/api/v1/tasks/${task.id}/executions`)).json()) as {
    items: Array<{
      id: string;
      tool: string;
      tool_call_id: string;
      status: string;
      request: Record<string, unknown>;
      idempotency_key: string;
      compensates_execution_id: string | null;
    }>;
  };
  const original = ledger.items.find((e) => e.id === call.id);
  const compensation = ledger.items.find((e) => e.compensates_execution_id === call.id);
  expect(original?.status).toBe("RECONCILED_SUCCEEDED");
  expect(compensation).toMatchObject({
    tool: undoName,
    status: "INTENT_RECORDED",
    request: { ...payout, payout_id: `po_${call.id}` },
  });
  expect(compensation!.idempotency_key).not.toBe(call.idempotency_key);
  const running = await api.task(task.id);
  expect(running.status).toBe("RUNNING");
  const taken = await agentContext.post(`/api/v1/tasks/${task.id}/executions`, {
    data: {
      tool_call_id: compensation!.tool_call_id,
      tool: undoName,
      request: compensation!.request,
      expected_version: running.version,
      compensates_execution_id: call.id,
    },
  });
  expect(taken.status(), await taken.text()).toBe(201);
  expect(await taken.json()).toMatchObject({ kind: "proceed", execution: { id: compensation!.id } });
  // A second compensation of the same payout is refused, in words naming the invariant.
  const again = await expectProblem(
    await agentContext.post(`/api/v1/tasks/${task.id}/executions`, {
      data: {
        tool_call_id: "undo-again",
        tool: undoName,
        request: compensation!.request,
        expected_version: (await api.task(task.id)).version,
        compensates_execution_id: call.id,
      },
    }),
    422,
    "invariant-violated",
  );
  expect(again.violations?.map((v) => v.invariant)).toEqual(["one_compensation_per_effect"]);
  await agentContext.dispose();
  await admin.dispose();
  await owner.close();
});
