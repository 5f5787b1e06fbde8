import { expect, test, type Browser, type Page } from "@playwright/test";
import { createRunningTask, transition } from "../pages/agent-seed";
import { addNoteWithReceipt, CheckpointInspectorPage, takeCheckpoint } from "../pages/checkpoints-page";
import { signIn, type DemoUser } from "../pages/login-page";

/**
 * The README's pictures (docs/screenshots/), made from the demo data by
 * `npm run screenshots` so they stay current: the dashboard, a task, a
 * review, a task's history and a restore plan, at 1280×800. Each waits for
 * the screen it shows, so an error page cannot stand in for one. Skipped in
 * the ordinary e2e run (it writes into docs/).
 */
const dir = process.env.VERITY_README_SCREENSHOTS;
test.skip(!dir, "set VERITY_README_SCREENSHOTS=<folder> (npm run screenshots)");
test.use({ viewport: { width: 1280, height: 800 } });

async function openAs(browser: Browser, user: DemoUser, path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  const page = await context.newPage();
  await signIn(page, user, path);
  return page;
}

test("README screenshots: dashboard, task, review, history, restore plan", async ({ browser, request }) => {
  test.setTimeout(240_000);
  // A task with a note sent and receipted, a checkpoint of it, then one more step: a restore plan has work to show.
  const running = await createRunningTask(request);
  const { task } = await addNoteWithReceipt(request, running);
  const checkpoint = await takeCheckpoint(request, task);
  await transition(request, task, { patch: { budget: { tokens_spent: 1200, hops_used: 2 } } });

  const operator = await openAs(browser, "operator", "/dashboard");
  await expect(operator.getByRole("heading", { level: 1, name: /Dashboard/i })).toBeVisible();
  await operator.waitForLoadState("networkidle");
  await operator.screenshot({ path: `${dir}/dashboard.png` });

  await operator.goto(`/tasks/${encodeURIComponent(task.id)}`);
  await expect(operator.getByRole("heading", { level: 1 })).toContainText(task.id);
  await operator.screenshot({ path: `${dir}/task.png` });

  // A review from the demo's frozen refunds.
  await operator.goto("/reviews");
  const review = operator.getByRole("main").locator('a[href^="/reviews/"]').first();
  await expect(review, "the demo data has a review waiting").toBeVisible({ timeout: 60_000 });
  await review.click();
  await expect(operator).toHaveURL(/\/reviews\/[^/]+$/);
  await expect(operator.getByRole("heading", { level: 1 })).toBeVisible();
  await operator.screenshot({ path: `${dir}/review.png` });
  await operator.context().close();

  const auditor = await openAs(browser, "auditor", `/tasks/${encodeURIComponent(task.id)}/history`);
  await expect(auditor.locator(".audit-history__list > li.audit-row").first()).toBeVisible();
  await expect(auditor.locator(".audit-badge").first()).toContainText("Verified", { timeout: 60_000 });
  await auditor.screenshot({ path: `${dir}/history.png` });
  await auditor.context().close();

  const engineer = await openAs(browser, "engineer", `/checkpoints/${encodeURIComponent(checkpoint.id)}`);
  const inspector = new CheckpointInspectorPage(engineer);
  await inspector.planButton.click();
  await expect(inspector.plan).toContainText("Refused — Stale");
  await inspector.rewind.check();
  await inspector.planButton.click();
  await expect(inspector.plan).toContainText("Allowed: a rewind");
  await inspector.restore.scrollIntoViewIfNeeded();
  await inspector.restore.screenshot({ path: `${dir}/restore-plan.png` });
  await engineer.context().close();
});
