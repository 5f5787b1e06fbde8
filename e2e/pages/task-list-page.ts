import type { Locator, Page } from "@playwright/test";

export class TaskListPage {
  readonly heading: Locator;
  readonly workflowFilter: Locator;
  readonly statusFilter: Locator;
  readonly search: Locator;
  readonly apply: Locator;
  readonly rows: Locator;
  readonly nextPage: Locator;
  readonly firstPage: Locator;
  readonly emptyState: Locator;
  readonly summary: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Tasks" });
    this.workflowFilter = page.getByLabel("Workflow", { exact: true });
    this.statusFilter = page.getByLabel("Status", { exact: true });
    this.search = page.getByLabel("Task id starts with", { exact: true });
    this.apply = page.getByRole("button", { name: "Apply" });
    this.rows = page.locator("table.table tbody tr");
    this.nextPage = page.getByRole("link", { name: "Next page →" });
    this.firstPage = page.getByRole("link", { name: "← First page" });
    this.emptyState = page.locator(".empty-state");
    this.summary = page.getByRole("region", { name: "Tasks by status" });
  }

  async goto(query = ""): Promise<void> {
    await this.page.goto(`/tasks${query}`);
  }

  row(taskId: string): Locator {
    return this.rows.filter({ has: this.page.getByRole("link", { name: taskId, exact: true }) });
  }

  async searchFor(prefix: string): Promise<void> {
    await this.search.fill(prefix);
    await this.apply.click();
    await this.page.waitForURL((url) => url.searchParams.get("q") === prefix);
  }
}
