import { expect, test, type APIRequestContext } from "@playwright/test";
import { demoObserver } from "@/lib/config/demo-accounts";
import { createRunningTask } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { captureServerAction, replayServerAction } from "../pages/server-action";
import { TaskDetailPage } from "../pages/task-detail-page";
import { authHeaders, expectProblem } from "./agent-api";

/**
 * The audit routes over real HTTP, as an auditor's token (the demo
 * observer-bot has the auditor role) and as the refund agent, who may not
 * read the log: its refusal is itself an audit entry.
 */

interface Entry {
  id: string;
  stream: string;
  seq: number;
  action: string;
  actor: string;
  subject_id: string;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

let auditor: APIRequestContext;
test.beforeAll(async ({ playwright, baseURL }) => {
  auditor = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${demoObserver.token}` },
  });
});
test.afterAll(async () => auditor?.dispose());

test("an agent without audit:read is refused with problem+json, and the refusal is in the log", async ({ request }) => {
  const started = new Date().toISOString();
  await expectProblem(await request.get("/api/v1/audit/verify", { headers: authHeaders }), 403, "forbidden");
  await expectProblem(await request.get("/api/v1/audit/export", { headers: authHeaders }), 403, "forbidden");
  await expectProblem(await request.get("/api/v1/audit/entries"), 401, "unauthenticated");

  const res = await auditor.get(`/api/v1/audit/entries?action=auth.denied&from=${encodeURIComponent(started)}`);
  expect(res.status(), await res.text()).toBe(200);
  const denied = ((await res.json()) as { items: Entry[] }).items.filter(
    (e) => e.actor === "spiffe://verity.local/agent/refund-bot",
  );
  expect(denied.map((e) => [e.subject_id, e.details.where])).toEqual([
    ["audit:read", "GET /api/v1/audit/verify"],
    ["audit:export", "GET /api/v1/audit/export"],
  ]);
});

test("GET /audit/verify walks every chain of the live database", async () => {
  const res = await auditor.get("/api/v1/audit/verify");
  expect(res.status(), await res.text()).toBe(200);
  const report = (await res.json()) as { ok: boolean; streams: number; entries: number; first_break: unknown };
  expect(report).toMatchObject({ ok: true, first_break: null });
  expect(report.entries).toBeGreaterThan(0);
});

test("an export streams as JSON Lines and CSV, verifies when sent back, and an edited line is named", async () => {
  const jsonl = await auditor.get("/api/v1/audit/export?format=jsonl&action=auth.denied");
  expect(jsonl.status(), await jsonl.text()).toBe(200);
  expect(jsonl.headers()["content-type"]).toContain("application/x-ndjson");
  expect(jsonl.headers()["content-disposition"]).toMatch(/^attachment; filename="verity-audit-.*\.jsonl"$/);
  const text = await jsonl.text();
  const lines = text.trim().split("\n");
  expect(lines.length).toBeGreaterThanOrEqual(2);
  for (const line of lines)
    expect(JSON.parse(line)).toMatchObject({ action: "auth.denied", hash: expect.stringMatching(/^[0-9a-f]{64}$/) });

  const verified = await auditor.post("/api/v1/audit/verify", {
    headers: { "Content-Type": "application/x-ndjson" },
    data: text,
  });
  expect(verified.status(), await verified.text()).toBe(200);
  expect(await verified.json()).toMatchObject({
    ok: true,
    format: "jsonl",
    records: lines.length,
    first_problem: null,
  });

  const edited = [lines[0], lines[1]!.replace('"where":"', '"where":"(edited) '), ...lines.slice(2)].join("\n");
  expect(edited).not.toBe(lines.join("\n"));
  const refused = await auditor.post("/api/v1/audit/verify", {
    headers: { "Content-Type": "application/x-ndjson" },
    data: edited,
  });
  expect(refused.status()).toBe(200);
  expect(await refused.json()).toMatchObject({ ok: false, first_problem: { line: 2, kind: "entry_edited" } });

  const csv = await auditor.get("/api/v1/audit/export?format=csv&action=auth.denied");
  expect(csv.headers()["content-type"]).toContain("text/csv");
  const csvText = await csv.text();
  expect(csvText.split("\n")[0]).toBe(
    "stream,seq,id,at,actor,actor_kind,action,subject_type,subject_id,task_id,details,prev_hash,hash",
  );
  const csvVerified = await auditor.post("/api/v1/audit/verify", {
    headers: { "Content-Type": "text/csv" },
    data: csvText,
  });
  expect(await csvVerified.json()).toMatchObject({ ok: true, format: "csv" });

  // The copy taken out is on record too.
  const exports = await auditor.get("/api/v1/audit/entries?action=audit.exported");
  expect(
    ((await exports.json()) as { items: Entry[] }).items.filter((e) => e.actor === demoObserver.identity).length,
  ).toBeGreaterThanOrEqual(2);
});

test("a console cancel by an operator, and the same action refused to an auditor's session, are both in the log an auditor token reads", async ({
  browser,
  request,
}) => {
  const task = await createRunningTask(request);
  const operatorContext = await browser.newContext();
  const auditorContext = await browser.newContext();
  try {
    const operatorPage = await operatorContext.newPage();
    await signIn(operatorPage, "operator", `/tasks/${task.id}`);
    const detail = new TaskDetailPage(operatorPage);
    // The auditor posts the operator's cancel by hand: refused, and the refusal recorded where it happened.
    const action = await captureServerAction(operatorPage, () => detail.take("CANCELLED", "captured, never sent"));
    const auditorPage = await auditorContext.newPage();
    await signIn(auditorPage, "auditor");
    expect(await (await replayServerAction(auditorPage.request, action)).text()).toContain(
      "does not have the tasks:transition permission",
    );

    await detail.goto(task.id);
    await detail.take("CANCELLED", "customer withdrew the refund");
    await expect(detail.status).toHaveText("CANCELLED");

    const res = await auditor.get(`/api/v1/audit/entries?task=${encodeURIComponent(task.id)}&action=task.transitioned`);
    expect(res.status(), await res.text()).toBe(200);
    const moves = ((await res.json()) as { items: Entry[] }).items;
    expect(moves.map((e) => [e.stream, e.details.to_status, e.actor])).toEqual([
      [`task:${task.id}`, "PLANNING", "spiffe://verity.local/agent/refund-bot"],
      [`task:${task.id}`, "READY", "spiffe://verity.local/agent/refund-bot"],
      [`task:${task.id}`, "RUNNING", "spiffe://verity.local/agent/refund-bot"],
      [`task:${task.id}`, "CANCELLED", "spiffe://verity.local/user/operator"],
    ]);
    expect(moves[3]!.details).toMatchObject({ from_version: 4, to_version: 5, reason: "customer withdrew the refund" });

    const denials = await auditor.get(
      "/api/v1/audit/entries?action=auth.denied&actor=spiffe%3A%2F%2Fverity.local%2Fuser%2Fauditor",
    );
    const denied = ((await denials.json()) as { items: Entry[] }).items;
    expect(denied.map((e) => [e.subject_id, e.details.where])).toContainEqual([
      "tasks:transition",
      "action transitionTaskAction",
    ]);
  } finally {
    await operatorContext.close();
    await auditorContext.close();
  }
});

test("bad audit requests are problems naming the field", async () => {
  await expectProblem(await auditor.get("/api/v1/audit/export?format=xml"), 400, "validation-failed");
  await expectProblem(await auditor.get("/api/v1/audit/entries?action=task.exploded"), 400, "validation-failed");
  await expectProblem(await auditor.get("/api/v1/audit/entries?from=yesterday"), 400, "validation-failed");
  await expectProblem(
    await auditor.post("/api/v1/audit/verify", { headers: { "Content-Type": "application/json" }, data: "{}" }),
    415,
    "unsupported-media-type",
  );
  await expectProblem(await auditor.delete("/api/v1/audit/entries"), 405, "method-not-allowed");
});
