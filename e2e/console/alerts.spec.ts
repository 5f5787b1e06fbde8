import { mkdirSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { signIn } from "../pages/login-page";
import { AlertDetailPage, AlertsPage, seedStaleWriteAlert } from "../pages/alerts-page";

/**
 * The alerts centre in a browser: alerts raised by a real stale write (the
 * agent API refuses it, the invariant monitor turns the refusal into an
 * alert), filtered, opened and acknowledged by an operator; read but not
 * acted on by an auditor; a stale action refused in words.
 */
const shots = process.env.ALERT_SHOTS_DIR ?? "test-results/alert-screenshots";
mkdirSync(shots, { recursive: true });
test.use({ viewport: { width: 1280, height: 860 } });
test.setTimeout(120_000);

test("an operator filters the alerts, opens a stale write, acknowledges it with a reason and sees it change", async ({
  page,
  request,
}) => {
  await signIn(page, "operator", "/alerts");
  const { task, alertId } = await seedStaleWriteAlert(request, page.request);
  const alerts = new AlertsPage(page);
  await alerts.goto();
  await expect(alerts.monitor).toContainText("Invariant monitor");
  await alerts.filter({
    status: "Open",
    kind: "A worker wrote with an outdated version or fencing token",
    task: task.id,
  });
  await expect(page).toHaveURL(/status=OPEN/);
  await expect(page).toHaveURL(/kind=stale_write/);
  await expect(page).toHaveURL(new RegExp(`task=${task.id}`));
  await expect(page.getByTestId("alert-total")).toHaveText("1 alert matches these filters");
  const row = alerts.row(task.id);
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("Critical");
  await expect(row).toContainText("had already ended CANCELLED");
  await expect(row).toContainText("Open");
  await expect(row).toContainText("1×");
  await page.screenshot({ path: `${shots}/alerts-list.png`, fullPage: true });

  await row.getByRole("link", { name: "A worker wrote with an outdated version or fencing token" }).click();
  await expect(page).toHaveURL(new RegExp(`/alerts/${alertId}$`));
  const detail = new AlertDetailPage(page);
  await expect(detail.title).toContainText("A worker wrote with an outdated version or fencing token");
  await expect(page.getByRole("heading", { name: "Verity's record (internal)" })).toBeVisible();
  await expect(page.getByText('"current_status": "CANCELLED"')).toBeVisible();
  await expect(detail.history).toContainText("Raised");
  // Without a reason nothing is sent: the field says why.
  await detail.button("Acknowledge").click();
  await expect(page.getByText("Give a reason to acknowledge")).toBeVisible();
  await detail.reason.fill("The worker was stopped; the task was cancelled on purpose.");
  await page.screenshot({ path: `${shots}/alert-detail.png`, fullPage: true });
  await detail.button("Acknowledge").click();
  await expect(
    page.getByRole("status").filter({ hasText: "Acknowledged. The alert no longer blocks its task" }),
  ).toBeVisible();
  await expect(page.getByText("Acknowledged", { exact: true }).first()).toBeVisible();
  await expect(detail.history).toContainText("The worker was stopped; the task was cancelled on purpose.");
  await expect(detail.history).toContainText("verity.local/user/operator");
  await expect(detail.button("Acknowledge")).toHaveCount(0);
  await page.screenshot({ path: `${shots}/alert-acknowledged.png`, fullPage: true });

  // Unfiltered, the list counts every alert and turns to oldest first by its Age column, keeping the order in the URL.
  await alerts.goto();
  await expect(page.getByTestId("alert-total")).toHaveText(/^\d+ alerts? in all$/);
  await page.getByRole("columnheader", { name: /Age/ }).getByRole("link").click();
  await expect(page).toHaveURL(/\/alerts\?order=asc$/);
  await expect(page.getByRole("columnheader", { name: /Age/ })).toHaveAttribute("aria-sort", "descending");
  await expect(page.getByRole("table", { name: "Alerts, oldest first" })).toBeVisible();

  // The list shows it changed.
  await alerts.goto(`?task=${task.id}`);
  await expect(alerts.row(task.id)).toContainText("Acknowledged");
  // The task page lists it too.
  await page.goto(`/tasks/${task.id}`);
  await expect(page.getByRole("region", { name: /Alerts on this task/ })).toContainText(
    "A worker wrote with an outdated version or fencing token",
  );
});

test("an action on a version someone else changed meanwhile is refused in words, and nothing is overwritten", async ({
  page,
  request,
}) => {
  await signIn(page, "operator", "/alerts");
  const { alertId } = await seedStaleWriteAlert(request, page.request);
  await page.goto(`/alerts/${alertId}`);
  const detail = new AlertDetailPage(page);
  await expect(detail.button("Escalate")).toBeVisible();
  // The page's live poll would notice the change below and show version 2
  // before the click; paused, it stays at version 1, like a page whose next
  // poll has not come yet.
  await detail.pauseLiveUpdates();
  // Someone escalates it through the API while this page still shows version 1.
  const other = await page.request.post(`/api/v1/alerts/${alertId}/escalate`, {
    data: { expected_version: 1, reason: "finance should look at this worker" },
  });
  expect(other.status()).toBe(200);
  await detail.reason.fill("acknowledging what I saw");
  await detail.button("Acknowledge").click();
  const conflict = page.getByRole("alert").filter({ hasText: "Someone acted on this alert first" });
  await expect(conflict).toBeVisible();
  await expect(conflict).toContainText("you saw version 1; it is now version 2, ESCALATED");
  await expect(detail.history).toContainText("finance should look at this worker");
  await page.screenshot({ path: `${shots}/alert-conflict.png`, fullPage: true });
});

test("an auditor sees every alert and its evidence but cannot act; the server refuses the action too", async ({
  page,
  request,
  browser,
}) => {
  const operator = await browser.newContext();
  const operatorPage = await operator.newPage();
  await signIn(operatorPage, "operator", "/alerts");
  const { task, alertId } = await seedStaleWriteAlert(request, operatorPage.request);
  await operator.close();

  await signIn(page, "auditor", "/alerts");
  const alerts = new AlertsPage(page);
  await alerts.goto(`?task=${task.id}`);
  await expect(page.getByRole("note").filter({ hasText: "Read-only: your role (auditor)" })).toBeVisible();
  await expect(alerts.row(task.id)).toContainText("Critical");
  await page.goto(`/alerts/${alertId}`);
  const detail = new AlertDetailPage(page);
  await expect(page.getByText("Your role (auditor) can read this alert but not act on it")).toBeVisible();
  await expect(detail.reason).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Acknowledge" })).toHaveCount(0);
  await page.screenshot({ path: `${shots}/alert-auditor.png`, fullPage: true });
  const refused = await page.request.post(`/api/v1/alerts/${alertId}/acknowledge`, {
    data: { expected_version: 1, reason: "trying anyway" },
  });
  expect(refused.status()).toBe(403);
  expect(refused.headers()["content-type"]).toContain("application/problem+json");
});

test("filters that match nothing show a designed empty state", async ({ page }) => {
  await signIn(page, "auditor", "/alerts");
  const alerts = new AlertsPage(page);
  await alerts.goto("?kind=audit_chain_break&task=no-such-task&severity=bogus");
  await expect(page.getByRole("heading", { name: "No alerts match these filters" })).toBeVisible();
  await expect(page.getByText('Ignored unknown filter: severity "bogus"')).toBeVisible();
  await page.screenshot({ path: `${shots}/alerts-empty.png`, fullPage: true });
});
