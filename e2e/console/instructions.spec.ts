import { expect, test, type APIRequestContext } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask, getTaskVersion, type SeededTask } from "../pages/agent-seed";
import { InstructionsPanel } from "../pages/instructions-page";
import { signIn } from "../pages/login-page";
import { ReviewDetailPage, ReviewQueuePage } from "../pages/reviews-page";
import { lookupAtProvider } from "../pages/reviews-seed";

/**
 * The spec's stale-memory case end to end: the requester's approval relayed
 * by the agent, an operator's "do not issue refund" added in the console,
 * and the agent's refund relying on the old approval frozen into the review
 * queue (never sent), with both instructions side by side.
 */
const auth = { Authorization: `Bearer ${demoAgent.token}` };
const shots = process.env.E2E_SHOTS_DIR ?? "test-results/instruction-screenshots";
test.use({ viewport: { width: 1280, height: 900 } });
// Several people's pages and an API round trip per test, on a shared, often loaded machine.
test.setTimeout(180_000);

const refundRequest = (taskId: string) => ({
  amount_cents: 4_200,
  currency: "usd",
  charge_id: `ch_${taskId}`,
  customer_id: `cus_${taskId}`,
});

async function agentRecords(
  request: APIRequestContext,
  task: SeededTask,
  expectedSeq: number,
  body: Record<string, unknown>,
) {
  const res = await request.post(`/api/v1/tasks/${encodeURIComponent(task.id)}/instructions`, {
    data: { expected_seq: expectedSeq, ...body },
    headers: auth,
  });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { instruction: { id: string; seq: number } }).instruction;
}

test("an operator's 'do not issue refund' supersedes the relayed approval; the agent's refund relying on it lands in the review queue, never sent", async ({
  page,
  request,
}) => {
  const task = await createRunningTask(request);
  // The agent relays the requester's words: authorized, issued by the agent.
  const approval = await agentRecords(request, task, 0, {
    topic: "refund",
    directive: "allow",
    text: "User approved refund",
    source: "user",
  });
  // …and its own summary of them: recorded, never authorized.
  await agentRecords(request, task, 1, {
    topic: "refund",
    directive: "allow",
    text: "Memory: the user is fine with any refund",
    source: "agent_memory",
  });

  await signIn(page, "operator", `/tasks/${encodeURIComponent(task.id)}`);
  const panel = new InstructionsPanel(page);
  await expect(panel.current).toHaveCount(1);
  await expect(panel.current.first()).toContainText("User approved refund");
  await expect(panel.entry(2)).toContainText("unauthorized");
  await page.screenshot({ path: `${shots}/instructions-before.png`, fullPage: true });

  await panel.add("forbid", "Do not issue refund");
  // The first server action of a fresh server can take a while on a loaded machine.
  await expect(panel.done).toContainText("Recorded as #3", { timeout: 60_000 });
  await expect(panel.current.first()).toContainText("Do not issue refund");
  await expect(panel.entry(1)).toContainText("superseded by #3");
  await expect(panel.entry(1).locator("s")).toHaveText("“User approved refund”");
  await expect(panel.entry(3)).toContainText("current");
  await expect(panel.text).toHaveValue("");
  await panel.region.screenshot({ path: `${shots}/instructions-after.png` });

  // The agent, working from what it read before, relies on the old approval.
  const now = await getTaskVersion(request, task.id);
  const intent = await request.post(`/api/v1/tasks/${encodeURIComponent(task.id)}/executions`, {
    data: {
      tool_call_id: "refund",
      tool: "payments.refund",
      request: refundRequest(task.id),
      expected_version: now.version,
      instruction_id: approval.id,
    },
    headers: auth,
  });
  expect(intent.status()).toBe(202);
  const blocked = (await intent.json()) as {
    kind: string;
    detail: string;
    review_id: string;
    execution: { idempotency_key: string; status: string; sent_at: string | null };
  };
  expect(blocked).toMatchObject({
    kind: "blocked",
    execution: { status: "NEEDS_HUMAN", sent_at: null },
    // The words come with the instructions themselves; the stored reason names them by number only.
    instructions: {
      kind: "superseded",
      relied_on: { text: "User approved refund" },
      current: { text: "Do not issue refund" },
    },
  });
  expect(blocked.detail).toContain("superseded by #3 forbid");
  expect((await lookupAtProvider(blocked.execution.idempotency_key)).data).toHaveLength(0);

  const queue = new ReviewQueuePage(page);
  await queue.goto();
  await expect(queue.row(task.id)).toBeVisible();
  await queue.open(task.id);
  const review = new ReviewDetailPage(page);
  const conflict = page.getByRole("region", { name: "Blocked by the task's instructions" });
  await expect(conflict).toContainText("superseded by a newer one");
  await expect(conflict.locator(".instr-side").nth(0)).toContainText("User approved refund");
  await expect(conflict.locator(".instr-side").nth(1)).toContainText("Do not issue refund");
  await expect(conflict).toContainText("It was never sent");
  await expect(review.status).toHaveText("OPEN");
  await page.screenshot({ path: `${shots}/review-blocked.png`, fullPage: true });

  // Rejected: the refund is cancelled; the provider never sees it.
  await review.decide("Reject", "the latest instruction says no refund");
  await expect(review.status).toHaveText("REJECTED", { timeout: 60_000 });
  expect((await lookupAtProvider(blocked.execution.idempotency_key)).data).toHaveLength(0);
  expect((await getTaskVersion(request, task.id)).status).toBe("CANCELLED");
});

test("an instruction added meanwhile is shown, not overwritten: the stale form records nothing and keeps what was typed", async ({
  page,
  request,
}) => {
  const task = await createRunningTask(request);
  await signIn(page, "operator", `/tasks/${encodeURIComponent(task.id)}`);
  const panel = new InstructionsPanel(page);
  await expect(panel.region).toContainText("No instructions recorded.");
  await page.screenshot({ path: `${shots}/instructions-empty.png`, fullPage: true });

  await agentRecords(request, task, 0, {
    topic: "refund",
    directive: "forbid",
    text: "Customer called: hold the refund",
    source: "user",
  });
  await panel.add("allow", "Refund approved by the manager");
  await expect(panel.conflict).toContainText("Someone added an instruction meanwhile", { timeout: 60_000 });
  await expect(panel.conflict).toContainText("Customer called: hold the refund");
  await expect(panel.text).toHaveValue("Refund approved by the manager");
  await expect(panel.entries).toHaveCount(1);
  await panel.region.screenshot({ path: `${shots}/instructions-conflict.png` });

  // Having read it, the operator submits again on the new seq: recorded, superseding it.
  await panel.submit.click();
  await expect(panel.done).toContainText("Recorded as #2", { timeout: 60_000 });
  await expect(panel.entry(1)).toContainText("superseded by #2");
});

test("an auditor reads the ledger but has no form", async ({ page, request }) => {
  const task = await createRunningTask(request);
  await agentRecords(request, task, 0, {
    topic: "refund",
    directive: "forbid",
    text: "Do not issue refund",
    source: "user",
  });
  await signIn(page, "auditor", `/tasks/${encodeURIComponent(task.id)}`);
  const panel = new InstructionsPanel(page);
  await expect(panel.current.first()).toContainText("Do not issue refund");
  await expect(panel.form).toHaveCount(0);
  await expect(panel.region).toContainText("can read the instructions but not add one");
});
