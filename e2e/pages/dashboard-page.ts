import type { Locator, Page } from "@playwright/test";

/** /dashboard: headline numbers and one region per chart, named by its title. */
export class DashboardPage {
  readonly heading: Locator;
  readonly headline: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Dashboard" });
    this.headline = page.getByRole("region", { name: "Headline numbers" });
  }

  async goto(): Promise<void> {
    await this.page.goto("/dashboard");
  }

  chart(title: string): Locator {
    return this.page.getByRole("region", { name: title, exact: true });
  }

  headlineLink(label: string): Locator {
    return this.headline.getByRole("link", { name: label });
  }
}

export const chartTitles = [
  "Tasks by state",
  "Unknown outcomes and their age",
  "Transitions per minute, last 60 minutes",
  "Review backlog and time to decision",
  "Divergence and consistency alerts, last 14 days",
  "Stale-write conflicts per minute, last 60 minutes",
  "Budget spent, by workflow",
] as const;

/** /executions: the filters and the table. */
export class ExecutionsPage {
  readonly heading: Locator;
  readonly statusFilter: Locator;
  readonly toolFilter: Locator;
  readonly rows: Locator;
  readonly emptyState: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Executions" });
    this.statusFilter = page.getByLabel("Status", { exact: true });
    this.toolFilter = page.getByLabel("Tool", { exact: true });
    this.rows = page.locator("table.table tbody tr");
    this.emptyState = page.locator(".empty-state");
  }

  row(executionId: string): Locator {
    return this.rows.filter({ has: this.page.getByRole("rowheader", { name: executionId }) });
  }
}

/** /audit/retention: the policy, the hold forms, apply now. */
export class RetentionPage {
  readonly heading: Locator;
  readonly policy: Locator;
  readonly activeHolds: Locator;
  readonly placeForm: Locator;
  readonly applyForm: Locator;
  readonly termForm: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Retention and legal holds" });
    this.policy = page.getByTestId("retention-policy");
    this.activeHolds = page.getByTestId("active-holds");
    this.placeForm = page.getByRole("form", { name: "Place a legal hold" });
    this.applyForm = page.getByRole("form", { name: "Apply retention now" });
    this.termForm = page.getByRole("form", { name: "Set a data class's term" });
  }

  /** Sets one class's term with the page's form ("" keeps it forever). */
  async setTerm(dataClass: string, days: string): Promise<void> {
    await this.termForm.getByLabel("Data class").selectOption(dataClass);
    await this.termForm.getByLabel("Keep for (days)").fill(days);
    await this.termForm.getByRole("button", { name: "Set the term" }).click();
  }

  async goto(): Promise<void> {
    await this.page.goto("/audit/retention");
  }

  async placeHold(options: { taskId?: string; from?: string; to?: string; reason: string }): Promise<void> {
    if (options.taskId) await this.placeForm.getByLabel("Task id (optional)").fill(options.taskId);
    if (options.from) await this.placeForm.getByLabel("From (UTC, optional)").fill(options.from);
    if (options.to) await this.placeForm.getByLabel("To (UTC, optional)").fill(options.to);
    await this.placeForm.getByLabel("Reason (required)").fill(options.reason);
    await this.placeForm.getByRole("button", { name: "Place legal hold" }).click();
  }

  holdRow(text: string): Locator {
    return this.activeHolds.locator("tbody tr").filter({ hasText: text });
  }

  async applyNow(days: number, confirm = true): Promise<void> {
    await this.applyForm.getByLabel("Delete entries older than (days)").fill(String(days));
    if (confirm) await this.applyForm.getByRole("checkbox").check();
    await this.applyForm.getByRole("button", { name: "Apply retention now" }).click();
  }
}
