import { expect, test } from "@playwright/test";
import { createRunningTask, createTask, transition } from "../pages/agent-seed";
import { LoginPage, signIn } from "../pages/login-page";
import { TaskDetailPage } from "../pages/task-detail-page";

/**
 * Full-page pictures of each screen at 1280×800 for a person to look at
 * (test-results/console-screenshots/). Each still asserts the screen is the
 * one intended, so a picture of an error page cannot pass for a good one.
 */
const dir = "test-results/console-screenshots";
test.use({ viewport: { width: 1280, height: 800 } });

test("screenshots of every console screen", async ({ page, browser, request }) => {
  // Three sign-ins, seven pages and a staged conflict: more than one test's worth of time.
  test.setTimeout(180_000);
  const login = new LoginPage(page);
  await login.goto();
  await page.screenshot({ path: `${dir}/login.png` });
  await login.fill("operator", "wrong-password");
  await expect(login.error).toBeVisible();
  await page.screenshot({ path: `${dir}/login-error.png` });

  let delivery = await createTask(request, { workflow: "delivery" });
  delivery = await transition(request, delivery, {
    patch: { gates: { plan_approved: true }, artifacts: { implementation_plan: "plans/export.md" } },
  });
  delivery = await transition(request, delivery, { to: "implementing" });
  let escalated = await createRunningTask(request);
  escalated = await transition(request, escalated, {
    patch: {
      budget: { currency_spent_usd: 1.25, tokens_spent: 5400, hops_used: 3 },
      subtasks: [{ id: "lookup-order", status: "COMPLETED" }],
    },
  });
  escalated = await transition(request, escalated, {
    to: "WAITING_FOR_HUMAN",
    reason: "refund above the automatic limit",
  });

  await signIn(page, "operator");
  await expect(page.locator("table.table tbody tr").first()).toBeVisible();
  await page.screenshot({ path: `${dir}/tasks.png`, fullPage: true });
  await page.goto("/tasks?q=no-such-task");
  await expect(page.locator(".empty-state")).toBeVisible();
  await page.screenshot({ path: `${dir}/tasks-empty.png`, fullPage: true });

  const detail = new TaskDetailPage(page);
  await detail.goto(escalated.id);
  await expect(detail.graph).toBeVisible();
  await page.screenshot({ path: `${dir}/task-detail.png`, fullPage: true });
  await detail.goto(delivery.id);
  await expect(detail.graph).toBeVisible();
  await page.screenshot({ path: `${dir}/task-detail-delivery.png`, fullPage: true });

  await page.goto("/workflows");
  await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
  await page.screenshot({ path: `${dir}/workflows.png`, fullPage: true });

  // The conflict message: a second operator acts on the version they saw.
  const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const otherPage = await other.newPage();
  await signIn(otherPage, "operator2", `/tasks/${escalated.id}`);
  const b = new TaskDetailPage(otherPage);
  await b.pauseLiveUpdates();
  await detail.goto(escalated.id);
  await detail.take("HUMAN_RESOLVED", "approved after a call with the customer");
  await expect(detail.status).toHaveText("HUMAN_RESOLVED");
  await b.take("CANCELLED", "customer withdrew");
  await expect(b.alert).toBeVisible();
  await b.transitionPanel.scrollIntoViewIfNeeded();
  await otherPage.screenshot({ path: `${dir}/conflict.png`, fullPage: true });
  await other.close();

  const auditor = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const auditorPage = await auditor.newPage();
  await signIn(auditorPage, "auditor", `/tasks/${escalated.id}`);
  await expect(new TaskDetailPage(auditorPage).readOnlyNotice).toBeVisible();
  await auditorPage.screenshot({ path: `${dir}/task-detail-auditor.png`, fullPage: true });
  await auditor.close();
});
