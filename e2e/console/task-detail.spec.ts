import { expect, test } from "@playwright/test";
import { createRunningTask, getTaskVersion, transition } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { TaskDetailPage } from "../pages/task-detail-page";

test.describe("task detail", () => {
  test("an operator sees the graph and timeline, cancels with a reason, and sees CANCELLED with the new entry", async ({
    page,
    request,
  }) => {
    const task = await createRunningTask(request);
    await signIn(page, "operator", `/tasks/${task.id}`);
    const detail = new TaskDetailPage(page);

    await expect(detail.title).toHaveText(task.id);
    await expect(detail.status).toHaveText("RUNNING");
    await expect(detail.version).toHaveText("version 4");
    await expect(detail.graph).toBeVisible();
    await expect(detail.graph.locator(".graph-node--current")).toContainText("RUNNING");
    await expect(detail.graph.locator(".graph-node--terminal, .graph-node--success")).toHaveCount(3);
    await expect(detail.graph.locator(".graph-edge--path")).toHaveCount(3);
    await expect(detail.nextSteps).toContainText("→ CANCELLED");
    await expect(detail.timelineItems).toHaveCount(4);
    await expect(detail.timelineItems.first()).toContainText("v4");
    await expect(detail.timelineItems.first()).toContainText("READY");

    // A person may only cancel from RUNNING: agent-only edges are not offered as buttons.
    await expect(detail.allTransitionButtons()).toHaveCount(1);
    await detail.take("CANCELLED", "customer called to withdraw");

    await expect(detail.status).toHaveText("CANCELLED");
    await expect(detail.version).toHaveText("version 5");
    await expect(detail.success).toContainText("Moved to CANCELLED (version 5)");
    const newest = detail.timelineItems.first();
    await expect(newest).toContainText("v5");
    await expect(newest).toContainText("RUNNING");
    await expect(newest).toContainText("CANCELLED");
    await expect(newest).toContainText("spiffe://verity.local/user/operator");
    await expect(newest.locator(".kind")).toHaveText("user");
    await expect(newest).toContainText("“customer called to withdraw”");
    await expect(detail.timelineItems).toHaveCount(5);
    await expect(detail.transitionPanel).toContainText("CANCELLED is a final state");
    await expect(detail.allTransitionButtons()).toHaveCount(0);
    expect(await getTaskVersion(request, task.id)).toEqual({ version: 5, status: "CANCELLED" });
  });

  test("cancelling without a reason is refused in words and changes nothing", async ({ page, request }) => {
    const task = await createRunningTask(request);
    await signIn(page, "operator", `/tasks/${task.id}`);
    const detail = new TaskDetailPage(page);
    await detail.take("CANCELLED");
    await expect(detail.alert).toContainText("Give a reason to move this task to CANCELLED");
    await expect(detail.status).toHaveText("RUNNING");
    expect(await getTaskVersion(request, task.id)).toEqual({ version: 4, status: "RUNNING" });
  });

  test("an escalated task offers the person's edges and blocks completion while mandatory subtasks are open", async ({
    page,
    request,
  }) => {
    let task = await createRunningTask(request);
    task = await transition(request, task, { to: "WAITING_FOR_HUMAN", reason: "amount above the limit" });
    await signIn(page, "operator", `/tasks/${task.id}`);
    const detail = new TaskDetailPage(page);
    await detail.take("HUMAN_RESOLVED", "approved by phone");
    await expect(detail.status).toHaveText("HUMAN_RESOLVED");
    // From HUMAN_RESOLVED a person may resume or complete; completion waits for the mandatory subtasks.
    await expect(detail.transitionButton("RUNNING")).toBeEnabled();
    await expect(detail.transitionButton("COMPLETED")).toBeDisabled();
    await expect(detail.transitionPanel).toContainText("still open: lookup-order, issue-refund");
  });

  test("the page follows changes made elsewhere without a reload", async ({ page, request }) => {
    const task = await createRunningTask(request);
    await signIn(page, "operator", `/tasks/${task.id}`);
    const detail = new TaskDetailPage(page);
    await expect(detail.status).toHaveText("RUNNING");
    await transition(request, task, { to: "WAITING_FOR_TOOL", reason: "refund call in flight" });
    await expect(detail.status).toHaveText("WAITING_FOR_TOOL", { timeout: 15_000 });
    await expect(detail.timelineItems.first()).toContainText("refund call in flight");
  });

  test("an unknown task id shows a designed not-found page", async ({ page }) => {
    await signIn(page, "operator", "/tasks/task_that_does_not_exist");
    await expect(page.getByRole("heading", { name: "No such task" })).toBeVisible();
    await expect(page.getByRole("link", { name: "Back to the task list" })).toBeVisible();
  });
});
