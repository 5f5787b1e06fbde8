import type { Locator, Page } from "@playwright/test";

/** The inbox (/inbox): its rows by kind and key, the total, the filters, and the navigation badge. */
export class InboxPage {
  readonly heading: Locator;
  readonly rows: Locator;
  readonly total: Locator;
  readonly emptyState: Locator;
  readonly navLink: Locator;
  readonly navCount: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Inbox" });
    this.rows = page.getByTestId("inbox-row");
    this.total = page.getByTestId("inbox-total").locator("strong");
    this.emptyState = page.locator(".empty-state");
    this.navLink = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /^Inbox/ });
    this.navCount = this.navLink.getByTestId("inbox-count");
  }

  async goto(search = ""): Promise<void> {
    await this.page.goto(`/inbox${search}`);
  }

  ofKind(kind: "review" | "escalated_task" | "gate" | "alert"): Locator {
    return this.page.locator(`[data-testid="inbox-row"][data-kind="${kind}"]`);
  }

  row(key: string): Locator {
    return this.page.locator(`[data-testid="inbox-row"][data-key="${key}"]`);
  }

  /** The row of a task's item: its task link names the task. */
  rowOfTask(taskId: string): Locator {
    return this.rows.filter({ has: this.page.locator(`a[href="/tasks/${encodeURIComponent(taskId)}"]`) });
  }

  filter(group: "Kind" | "Claimed" | "Sort", name: string): Locator {
    return this.page.getByRole("navigation", { name: group }).getByRole("link", { name: new RegExp(`^${name}`) });
  }
}
