import { expect, test } from "@playwright/test";
import { createRunningTask, createTask, uniqueTaskId } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { TaskListPage } from "../pages/task-list-page";

test.describe("task list", () => {
  test("searches by id prefix, filters by status and workflow, and keeps the filters in the URL", async ({
    page,
    request,
  }) => {
    const prefix = uniqueTaskId("list");
    const running = await createRunningTask(request, `${prefix}-a`);
    const fresh = await createTask(request, { id: `${prefix}-b` });
    const delivery = await createTask(request, { id: `${prefix}-c`, workflow: "delivery" });
    await signIn(page, "operator");
    const list = new TaskListPage(page);
    await expect(list.summary).toContainText("agent-task");

    await list.searchFor(prefix);
    await expect(list.rows).toHaveCount(3);
    await expect(list.row(running.id)).toContainText("RUNNING");
    await expect(list.row(running.id)).toContainText("agent/refund-bot");
    await expect(list.row(delivery.id)).toContainText("delivery");

    await list.statusFilter.selectOption("RECEIVED");
    await list.apply.click();
    await expect(page).toHaveURL(
      (url) => url.searchParams.get("status") === "RECEIVED" && url.searchParams.get("q") === prefix,
    );
    await expect(list.rows).toHaveCount(1);
    await expect(list.row(fresh.id)).toBeVisible();

    await list.statusFilter.selectOption("");
    await list.workflowFilter.selectOption("delivery");
    await list.apply.click();
    await expect(list.rows).toHaveCount(1);
    await expect(list.row(delivery.id)).toBeVisible();

    // The filters survive a reload: the URL is the state.
    await page.reload();
    await expect(list.workflowFilter).toHaveValue("delivery");
    await expect(list.search).toHaveValue(prefix);
    await list.row(delivery.id).getByRole("link", { name: delivery.id }).click();
    await expect(page).toHaveURL(new RegExp(`/tasks/${delivery.id}$`));
  });

  test("pages forward with the cursor and back to the first page, keeping the search", async ({ page, request }) => {
    const prefix = uniqueTaskId("page");
    const ids: string[] = [];
    for (let i = 0; i < 27; i++)
      ids.push((await createTask(request, { id: `${prefix}-${String(i).padStart(2, "0")}` })).id);
    await signIn(page, "operator", `/tasks?q=${prefix}`);
    const list = new TaskListPage(page);
    await expect(list.rows).toHaveCount(25);
    // Newest first: the last created leads page 1, the first two created are on page 2.
    await expect(list.rows.first()).toContainText(ids[26]!);
    await expect(page.getByText("No more tasks")).toHaveCount(0);
    await list.nextPage.click();
    await expect(page).toHaveURL((url) => url.searchParams.has("cursor") && url.searchParams.get("q") === prefix);
    await expect(list.rows).toHaveCount(2);
    await expect(list.row(ids[1]!)).toBeVisible();
    await expect(list.row(ids[0]!)).toBeVisible();
    await expect(page.getByText("No more tasks")).toBeVisible();
    await list.firstPage.click();
    await expect(page).toHaveURL((url) => !url.searchParams.has("cursor") && url.searchParams.get("q") === prefix);
    await expect(list.rows.first()).toContainText(ids[26]!);
  });

  test("an empty result and a broken cursor each get a designed message", async ({ page }) => {
    await signIn(page, "operator", "/tasks?q=no-such-task-anywhere");
    const list = new TaskListPage(page);
    await expect(list.emptyState).toContainText("No tasks match these filters");
    await expect(list.emptyState.getByRole("link", { name: "Clear filters" })).toBeVisible();
    await list.goto("?cursor=not-a-cursor");
    await expect(list.emptyState).toContainText("This page link no longer works");
  });

  test("a task created by an agent appears without a reload", async ({ page, request }) => {
    const prefix = uniqueTaskId("live");
    await signIn(page, "operator", `/tasks?q=${prefix}`);
    const list = new TaskListPage(page);
    await expect(list.emptyState).toBeVisible();
    const task = await createTask(request, { id: `${prefix}-x` });
    await expect(list.row(task.id)).toBeVisible({ timeout: 15_000 });
  });
});
