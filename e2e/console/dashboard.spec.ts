import { expect, test } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask, transition } from "../pages/agent-seed";
import { chartTitles, DashboardPage, ExecutionsPage } from "../pages/dashboard-page";
import { signIn } from "../pages/login-page";
import { freezeRefund } from "../pages/reviews-seed";
import { TaskListPage } from "../pages/task-list-page";

const shots = process.env.E2E_SHOTS_DIR ?? "test-results/dashboard-screenshots";
test.use({ viewport: { width: 1280, height: 900 } });

test.describe("dashboard", () => {
  test("shows every chart over the demo data and this test's own work, and the tasks-by-state links filter the task list", async ({
    page,
    request,
  }) => {
    // The demo agents run beside this test on a shared 2-core machine.
    test.setTimeout(120_000);
    // Spend recorded on a running task, and a stale write: an agent's retry with a version that moved on.
    let spender = await createRunningTask(request);
    spender = await transition(request, spender, {
      patch: { budget: { currency_spent_usd: 1.25, tokens_spent: 5400 } },
    });
    const stale = await request.post(`/api/v1/tasks/${encodeURIComponent(spender.id)}/transitions`, {
      data: { expected_version: spender.version - 1, to: "CANCELLED", reason: "stale view" },
      headers: { Authorization: `Bearer ${demoAgent.token}` },
    });
    expect(stale.status()).toBe(409);

    await signIn(page, "operator", "/dashboard");
    const dashboard = new DashboardPage(page);
    await expect(dashboard.heading).toBeVisible();
    for (const title of chartTitles) await expect(dashboard.chart(title), title).toBeVisible();

    // Numbers in words for everyone, drawings for those who see them.
    const tasks = dashboard.chart("Tasks by state");
    await expect(tasks).toContainText(/\d+ tasks? in \d+ states?/);
    await expect(tasks.locator("svg.recharts-surface")).toBeVisible();
    await expect(tasks.locator(".recharts-bar-rectangle").first()).toBeVisible();
    const transitions = dashboard.chart("Transitions per minute, last 60 minutes");
    await expect(transitions).toContainText(/state changes? in the last 60 minutes/);
    await expect(transitions.locator("svg.recharts-surface")).toBeVisible();
    const conflicts = dashboard.chart("Stale-write conflicts per minute, last 60 minutes");
    await expect(conflicts).toContainText(/stale writes? refused in the last 60 minutes: \d+ with an outdated version/);
    await expect(conflicts.getByRole("link", { name: "Stale-write alerts →" })).toHaveAttribute(
      "href",
      "/alerts?kind=stale_write",
    );
    await expect(dashboard.headlineLink("stale writes, last hour")).not.toContainText(/^0/);
    const budget = dashboard.chart("Budget spent, by workflow");
    await expect(budget.getByRole("rowheader", { name: "agent-task" })).toBeVisible();
    await expect(budget).toContainText(/\$\d/);
    await expect(dashboard.chart("Review backlog and time to decision")).toContainText(
      /No review is waiting|reviews? waiting/,
    );

    await page.screenshot({ path: `${shots}/dashboard.png`, fullPage: true });

    // The tasks-by-state links are real links: keyboard and click land on the filtered task list.
    const running = tasks.getByRole("list", { name: "Tasks by state" }).getByRole("link", { name: /^RUNNING/ });
    await expect(running).toHaveAttribute("href", "/tasks?status=RUNNING");
    await running.focus();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL((url) => url.pathname === "/tasks" && url.searchParams.get("status") === "RUNNING");
    const list = new TaskListPage(page);
    await expect(list.statusFilter).toHaveValue("RUNNING");
    await expect(list.rows.first()).toContainText("RUNNING");

    // A workflow in the legend filters by workflow.
    await page.goBack();
    await tasks.getByRole("list", { name: "Legend" }).getByRole("link", { name: "agent-task" }).click();
    await expect(page).toHaveURL(
      (url) => url.pathname === "/tasks" && url.searchParams.get("workflow") === "agent-task",
    );
  });

  test("the unknown-outcome and frozen links land on the executions list, filtered", async ({ page, request }) => {
    test.setTimeout(120_000);
    const frozen = await freezeRefund(request, { amountCents: 4200 });
    await signIn(page, "auditor", "/dashboard");
    const dashboard = new DashboardPage(page);
    const unknown = dashboard.chart("Unknown outcomes and their age");
    await expect(unknown).toContainText(/frozen executions? waiting for people/);
    await expect(unknown.locator("svg.recharts-surface")).toBeVisible();

    await dashboard.headlineLink("unknown outcomes").click();
    await expect(page).toHaveURL(
      (url) => url.pathname === "/executions" && url.searchParams.get("status") === "OUTCOME_UNKNOWN",
    );
    const executions = new ExecutionsPage(page);
    await expect(executions.heading).toBeVisible();
    await expect(executions.statusFilter).toHaveValue("OUTCOME_UNKNOWN");
    // The reconciler settles unknown outcomes within seconds here: either rows of that status, or the empty state saying so.
    await expect(executions.rows.first().or(executions.emptyState)).toBeVisible();
    for (const row of await executions.rows.all()) await expect(row).toContainText("OUTCOME_UNKNOWN");

    await page.goBack();
    await unknown.getByRole("link", { name: /frozen for people/ }).click();
    await expect(page).toHaveURL(
      (url) => url.pathname === "/executions" && url.searchParams.get("status") === "NEEDS_HUMAN",
    );
    const row = executions.row(frozen.executionId);
    await expect(row).toContainText("NEEDS_HUMAN");
    await expect(row).toContainText(frozen.idempotencyKey);
    await expect(row).toContainText("payments.refund");
    await page.screenshot({ path: `${shots}/executions-frozen.png`, fullPage: true });
    await row.getByRole("link", { name: frozen.task.id }).click();
    await expect(page).toHaveURL(new RegExp(`/tasks/${frozen.task.id}$`));

    // Filters are a plain GET form: the tool filter narrows, an unmatched one says so.
    await page.goto("/executions?status=NEEDS_HUMAN&tool=crm.add_note");
    await expect(executions.toolFilter).toHaveValue("crm.add_note");
    await expect(executions.emptyState).toContainText("No executions match these filters");
    await page.screenshot({ path: `${shots}/executions-empty.png`, fullPage: true });
  });
});
