import { expect, test } from "@playwright/test";
import { createRunningTask, getTaskVersion } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { captureServerAction, replayServerAction } from "../pages/server-action";
import { TaskDetailPage } from "../pages/task-detail-page";

test.describe("auditor", () => {
  test("sees the task, its graph and timeline, no transition buttons, and a read-only notice", async ({
    page,
    request,
  }) => {
    const task = await createRunningTask(request);
    await signIn(page, "auditor", `/tasks/${task.id}`);
    const detail = new TaskDetailPage(page);
    await expect(detail.status).toHaveText("RUNNING");
    await expect(detail.graph).toBeVisible();
    await expect(detail.timelineItems).toHaveCount(4);
    await expect(detail.readOnlyNotice).toContainText("Your role (auditor) can see this task");
    await expect(detail.transitionPanel).toHaveCount(0);
    // No control that changes anything: the only buttons are the copy buttons beside the ids.
    await expect(page.locator("main").getByRole("button", { name: /^(?!Copy )/ })).toHaveCount(0);
  });

  test("the server refuses the transition action even when an auditor posts it by hand", async ({
    browser,
    request,
  }) => {
    const task = await createRunningTask(request);
    const operatorContext = await browser.newContext();
    const auditorContext = await browser.newContext();
    try {
      // The operator's browser builds a real cancel request; it never reaches the server.
      const operatorPage = await operatorContext.newPage();
      await signIn(operatorPage, "operator", `/tasks/${task.id}`);
      const operator = new TaskDetailPage(operatorPage);
      const action = await captureServerAction(operatorPage, () =>
        operator.take("CANCELLED", "auditor should not be able to do this"),
      );

      const auditorPage = await auditorContext.newPage();
      await signIn(auditorPage, "auditor");
      const response = await replayServerAction(auditorPage.request, action);
      expect(response.ok()).toBe(true);
      expect(await response.text()).toContain("The auditor role does not have the tasks:transition permission");
      expect(await getTaskVersion(request, task.id)).toEqual({ version: 4, status: "RUNNING" });

      // The same request from a signed-out client is refused too.
      const anonymous = await browser.newContext();
      const refused = await replayServerAction(anonymous.request, action);
      expect(await refused.text()).toContain("Your session has ended");
      await anonymous.close();
      expect(await getTaskVersion(request, task.id)).toEqual({ version: 4, status: "RUNNING" });
    } finally {
      await operatorContext.close();
      await auditorContext.close();
    }
  });
});
