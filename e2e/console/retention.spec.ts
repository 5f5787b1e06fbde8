import { expect, test } from "@playwright/test";
import { createTask } from "../pages/agent-seed";
import { RetentionPage } from "../pages/dashboard-page";
import { signIn } from "../pages/login-page";
import { axeViolations } from "../pages/axe";
import { captureServerAction, replayServerAction } from "../pages/server-action";

const shots = process.env.E2E_SHOTS_DIR ?? "test-results/dashboard-screenshots";
test.use({ viewport: { width: 1280, height: 900 } });
/** A server action's answer, on a machine shared with the demo agents and other test workers. */
const answer = 30_000;

test.describe("audit retention", () => {
  test("an admin places a hold, runs retention, and releases the hold with a reason", async ({ page, request }) => {
    test.setTimeout(120_000);
    const task = await createTask(request);
    await signIn(page, "admin", "/audit/retention");
    const retention = new RetentionPage(page);
    await expect(retention.heading).toBeVisible();
    await expect(retention.policy).toContainText("Keep every entry forever");

    const reason = `litigation hold for ${task.id}`;
    await retention.placeHold({ taskId: task.id, reason });
    await expect(retention.placeForm.getByRole("status")).toContainText("placed", { timeout: answer });
    const row = retention.holdRow(task.id);
    await expect(row).toContainText(`Every entry of task ${task.id}`);
    await expect(row).toContainText(reason);
    await expect(row).toContainText("user/admin");

    // A range whose end is before its start is refused by field, nothing placed.
    await retention.placeHold({ from: "2026-06-01T00:00", to: "2026-01-01T00:00", reason: "backwards range" });
    await expect(retention.placeForm.getByRole("alert").first()).toContainText("must be after from", {
      timeout: answer,
    });
    await expect(retention.activeHolds).not.toContainText("backwards range");

    // Without the confirmation nothing runs; with it, the run answers what it did.
    await retention.applyNow(30, false);
    await expect(retention.applyForm.getByRole("alert").first()).toContainText("Nothing was deleted", {
      timeout: answer,
    });
    await retention.applyNow(30);
    await expect(retention.applyForm.getByRole("status")).toContainText(
      /Nothing was older than 30 days|Deleted \d+ entries older than 30 days/,
      { timeout: answer },
    );
    await page.screenshot({ path: `${shots}/retention-admin.png`, fullPage: true });

    await row.getByLabel(`Reason for releasing`).fill("case settled");
    await row.getByRole("button", { name: "Release" }).click();
    await expect(retention.activeHolds.locator("tbody tr").filter({ hasText: task.id })).toHaveCount(0, {
      timeout: answer,
    });
    await page.getByText(/Released holds/).click();
    await expect(page.locator(".retention-released")).toContainText(reason);
  });

  test("an admin deletes finished tasks' data by hand only with the confirmation, and is told what happened", async ({
    page,
  }) => {
    test.setTimeout(120_000);
    await signIn(page, "admin", "/audit/retention");
    await expect(page.getByTestId("task-retention-policy")).toContainText("Keep every finished task's data forever");
    const form = page.getByRole("form", { name: "Delete finished tasks' data now" });
    await form.getByLabel("Delete finished tasks quiet for (days)").fill("30");
    await form.getByRole("button", { name: "Delete finished tasks' data now" }).click();
    await expect(form.getByRole("alert").first()).toContainText("Nothing was deleted", { timeout: answer });
    await expect(form.locator(".field-error")).toContainText("Tick the box to confirm");

    await form.getByRole("checkbox").check();
    await form.getByRole("button", { name: "Delete finished tasks' data now" }).click();
    // The demo's tasks are minutes old: nothing is 30 days quiet, so nothing is deleted and nothing recorded.
    await expect(form.getByRole("status")).toContainText("No finished task was quiet for 30 days", { timeout: answer });
  });

  test("an auditor cannot open the page, and the admin's action replayed in the auditor's session is refused", async ({
    browser,
  }) => {
    test.setTimeout(120_000);
    const adminContext = await browser.newContext();
    const auditorContext = await browser.newContext();
    try {
      const auditorPage = await auditorContext.newPage();
      await signIn(auditorPage, "auditor", "/audit/retention");
      await expect(auditorPage.getByRole("heading", { name: "You cannot open this page" })).toBeVisible();
      await expect(auditorPage.locator(".empty-state")).toContainText(
        "does not include the audit:retention permission",
      );
      await expect(auditorPage.getByRole("form", { name: "Place a legal hold" })).toHaveCount(0);
      await auditorPage.screenshot({ path: `${shots}/retention-auditor.png`, fullPage: true });

      const adminPage = await adminContext.newPage();
      await signIn(adminPage, "admin", "/audit/retention");
      const retention = new RetentionPage(adminPage);
      const reason = `auditor replay ${Date.now()}`;
      const action = await captureServerAction(adminPage, () => retention.placeHold({ reason }));
      const response = await replayServerAction(auditorPage.request, action);
      expect(response.ok()).toBe(true);
      expect(await response.text()).toContain("The auditor role does not have the audit:retention permission");
      await adminPage.reload();
      await expect(adminPage.getByText(reason)).toHaveCount(0);
    } finally {
      await adminContext.close();
      await auditorContext.close();
    }
  });
  test("an admin sets a data class's term with the form: bad input refused by field, a stale page refused, axe clean at both widths", async ({
    page,
    context,
  }) => {
    test.setTimeout(150_000);
    await signIn(page, "admin", "/audit/retention");
    const retention = new RetentionPage(page);
    await expect(retention.termForm).toBeVisible();
    expect(await axeViolations(page)).toEqual([]);

    // Out of range: the engine's word beside the field, nothing changed.
    await retention.setTerm("restricted", "0");
    await expect(retention.termForm.locator(".field-error")).toContainText(/1|small/, { timeout: answer });
    await expect(retention.termForm.getByRole("alert").first()).toContainText("Nothing was changed");
    await expect(page.getByTestId("task-retention-policy")).toContainText("Keep every finished task's data forever");
    expect(await axeViolations(page)).toEqual([]);

    // A second page, read now, will be stale once the first one writes.
    const stale = await context.newPage();
    await stale.goto("/audit/retention");
    const staleRetention = new RetentionPage(stale);
    await expect(staleRetention.termForm).toBeVisible();

    await retention.setTerm("restricted", "36500");
    await expect(retention.termForm.getByRole("status")).toContainText("The restricted term is now 36500 days", {
      timeout: answer,
    });
    const table = page.getByTestId("task-retention-policy");
    await expect(table.getByRole("row", { name: /restricted/ })).toContainText("36500 days", { timeout: answer });
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/retention-term-1440.png`, fullPage: true });

    await staleRetention.setTerm("restricted", "7");
    await expect(
      staleRetention.termForm.getByRole("status").or(staleRetention.termForm.getByRole("alert")).first(),
    ).toContainText("changed since you read it", { timeout: answer });
    await stale.close();
    await page.reload();
    await expect(page.getByTestId("task-retention-policy").getByRole("row", { name: /restricted/ })).toContainText(
      "36500 days",
    );

    await page.setViewportSize({ width: 390, height: 844 });
    await expect(retention.termForm).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await retention.termForm.screenshot({ path: `${shots}/retention-term-390.png` });

    // Keyboard only: empty keeps the class forever again (and leaves the shared demo as it was).
    await retention.termForm.getByLabel("Data class").focus();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.press("Enter");
    await expect(retention.termForm.getByRole("status")).toContainText("The restricted term is now forever", {
      timeout: answer,
    });
    await expect(page.getByTestId("task-retention-policy")).toContainText("Keep every finished task's data forever", {
      timeout: answer,
    });
  });
});
