import { expect, test, type Page } from "@playwright/test";
import { expectPageFits, wide } from "../pages/look";
import { signIn } from "../pages/login-page";
import { everyWorkflowToken, publish } from "../pages/workflow-seed";
import { signedInRequest } from "../pages/login-page";
import { documentOf, workflowDefinitions } from "@/lib/model/workflows";

/**
 * Data classes in the console: a refund's customer is restricted
 * (lib/model/tools/built-in-tools.ts). On the same execution page of the
 * demo data an operator, who decides refunds, reads the customer; an
 * auditor, who has no clearance, reads "[restricted]" where it was, is told
 * why in words, and the customer is nowhere in the page the server sent.
 */
test.use({ viewport: wide });
test.describe.configure({ timeout: 180_000 });

const customerIn = (text: string) => /"customer_id":\s*"([^"]+)"/.exec(text)?.[1];

async function openFirstRefund(page: Page): Promise<string> {
  await page.goto("/executions?tool=payments.refund");
  const link = page.getByRole("main").locator('table tbody tr th a[href^="/executions/"]').first();
  const href = await link.getAttribute("href");
  expect(href).not.toBeNull();
  await page.goto(href!);
  await expect(page.getByRole("heading", { level: 3, name: "Request" })).toBeVisible({ timeout: 30_000 });
  return href!;
}

test("an operator reads a refund's customer where an auditor reads [restricted], on the same execution page", async ({
  browser,
}) => {
  const operator = await browser.newPage();
  await signIn(operator, "operator", "/executions");
  const href = await openFirstRefund(operator);
  const customer = customerIn(await operator.getByRole("main").innerText());
  expect(customer).toBeDefined();
  expect(customer).not.toBe("[restricted]");
  await expect(operator.getByTestId("masked-fields")).toHaveCount(0);

  const auditor = await browser.newPage();
  await signIn(auditor, "auditor", "/executions");
  await auditor.goto(href);
  const main = auditor.getByRole("main");
  await expect(main.getByRole("heading", { level: 3, name: "Request" })).toBeVisible({ timeout: 30_000 });
  expect(customerIn(await main.innerText())).toBe("[restricted]");
  await expect(auditor.getByTestId("masked-fields")).toContainText("/request/customer_id");
  await expect(auditor.getByTestId("masked-fields")).toContainText("no clearance");
  // Masked on the server: the value is not in the HTML (nor the RSC payload) the browser received.
  expect(await auditor.content()).not.toContain(customer!);
  await expectPageFits(auditor, "execution-restricted");
  await operator.close();
  await auditor.close();
});

/**
 * A workflow of the test's own that declares its review report and subtask
 * titles restricted: on the task page, the task's checkpoints page and the
 * checkpoint inspector (with the restore plan an auditor is shown) an
 * auditor reads "[restricted]" and a notice, and the report is nowhere in
 * what the server sent; an operator reads it on the task page.
 */
test("restricted task-state fields are masked for an auditor on the task page, the checkpoints pages and the restore plan", async ({
  browser,
  playwright,
  baseURL,
}) => {
  const suffix = Date.now().toString(36);
  const name = `classified-${suffix}`;
  const secret = `Jane Roe ${suffix}`;
  const agentTask = documentOf(workflowDefinitions.find((d) => d.name === "agent-task" && d.version === 2)!);
  const admin = await signedInRequest(playwright, baseURL, "admin");
  await publish(admin, {
    ...agentTask,
    name,
    // A title of its own: the workflows page's entries are found by title in other specs.
    title: `Classified ${suffix}`,
    version: 1,
    data_classes: { "/artifacts/review_report": "restricted", "/subtasks/*/title": "restricted" },
  });
  const adminPage = await browser.newPage();
  const token = await everyWorkflowToken(adminPage, `classified-bot-${suffix}`);
  await adminPage.close();
  const api = await playwright.request.newContext({ baseURL });
  const headers = { Authorization: `Bearer ${token}` };
  const post = async (url: string, data: unknown) => {
    const res = await api.post(url, { data, headers });
    expect(res.ok(), `${url} → ${res.status()} ${await res.text()}`).toBe(true);
    return (await res.json()) as Record<string, unknown>;
  };
  const taskId = `classified-${suffix}`;
  let version = (
    (await post("/api/v1/tasks", { workflow: name, task_id: taskId, intent_id: taskId })) as {
      version: number;
    }
  ).version;
  const move = async (step: Record<string, unknown>) => {
    const body = await post(`/api/v1/tasks/${taskId}/transitions`, { expected_version: version, ...step });
    version = (body.task as { version: number }).version;
  };
  for (const to of ["PLANNING", "READY", "RUNNING"]) await move({ to });
  await move({
    patch: {
      artifacts: { review_report: `the customer is ${secret}` },
      subtasks: [{ id: "phone", title: `Phone ${secret}`, mandatory: false }],
    },
  });
  const checkpoint = (await post(`/api/v1/tasks/${taskId}/checkpoints`, { expected_version: version })) as {
    checkpoint?: { id: string };
    id?: string;
  };
  const checkpointId = checkpoint.checkpoint?.id ?? checkpoint.id!;
  await move({ patch: { artifacts: { review_report: `a second report on ${secret}` } } });

  const operator = await browser.newPage();
  await signIn(operator, "operator", `/tasks/${taskId}`);
  await operator.goto(`/tasks/${taskId}`);
  await expect(operator.getByRole("main")).toContainText(secret, { timeout: 30_000 });
  await expect(operator.getByTestId("masked-fields")).toHaveCount(0);
  await operator.close();

  const auditor = await browser.newPage();
  await signIn(auditor, "auditor", `/tasks/${taskId}`);
  for (const [url, shot, pointer] of [
    [`/tasks/${taskId}`, "task-restricted", "/state/artifacts/review_report"],
    [`/tasks/${taskId}/checkpoints`, "task-checkpoints-restricted", "/task/state/artifacts/review_report"],
    [`/checkpoints/${checkpointId}`, "checkpoint-restricted", "/document/state_snapshot/artifacts/review_report"],
  ] as const) {
    await auditor.goto(url);
    await expect(auditor.getByTestId("masked-fields").first()).toContainText(pointer, { timeout: 30_000 });
    await expect(auditor.getByTestId("masked-fields").first()).toContainText("no clearance");
    // Masked on the server: the report is not in the HTML (nor the RSC payload) the browser received.
    expect(await auditor.content()).not.toContain(secret);
    await expectPageFits(auditor, shot);
  }
  // The inspector shows an auditor what a restore would do (a stale checkpoint: refused without a rewind), with nothing of the report.
  await expect(auditor.getByTestId("restore-plan")).toBeVisible();
  await auditor.close();
  await admin.dispose();
  await api.dispose();
});
