import type { Locator, Page } from "@playwright/test";

export class ReviewQueuePage {
  readonly heading: Locator;
  readonly rows: Locator;
  readonly emptyState: Locator;
  readonly readOnlyNotice: Locator;
  readonly navLink: Locator;
  readonly navCount: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Review queue" });
    this.rows = page.locator("table.review-table tbody tr");
    this.emptyState = page.locator(".empty-state");
    this.readOnlyNotice = page.getByRole("note").filter({ hasText: "Read-only" });
    this.navLink = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /^Review queue/ });
    this.navCount = this.navLink.getByTestId("review-count");
  }

  async goto(tab?: "waiting" | "escalated" | "approved" | "rejected" | "all"): Promise<void> {
    await this.page.goto(tab && tab !== "waiting" ? `/reviews?status=${tab}` : "/reviews");
  }

  row(taskId: string): Locator {
    return this.rows.filter({ has: this.page.getByRole("link", { name: taskId, exact: true }) });
  }

  /** Opens the review of a task's frozen refund from its row, the way an operator does. */
  async open(taskId: string): Promise<void> {
    await this.row(taskId)
      .getByRole("link", { name: /^(Review|View) the frozen/ })
      .click();
    await this.page.waitForURL(/\/reviews\/[^/?]+$/);
  }
}

export type ReviewDecisionButton =
  "Approve & execute" | "Accept provider's evidence" | "Accept evidence & compensate" | "Reject" | "Escalate";

export class ReviewDetailPage {
  readonly title: Locator;
  readonly status: Locator;
  readonly version: Locator;
  readonly approvals: Locator;
  readonly approvalsHeadline: Locator;
  readonly lookup: Locator;
  readonly history: Locator;
  readonly intendedCall: Locator;
  readonly panel: Locator;
  readonly reason: Locator;
  readonly alert: Locator;
  readonly done: Locator;
  readonly readOnly: Locator;

  constructor(readonly page: Page) {
    this.title = page.locator("h1.review-title");
    this.status = page.locator(".page-header .task-title__status .badge");
    this.version = page.locator(".page-header .version-pill");
    this.approvals = page.getByRole("region", { name: "Approvals" });
    this.approvalsHeadline = page.getByTestId("approvals-headline");
    this.lookup = page.getByRole("region", { name: "What the provider says now" });
    this.history = page.getByRole("region", { name: "Execution history" }).locator("ol.exec-events > li");
    this.intendedCall = page.getByRole("region", { name: "Intended call" });
    this.panel = page.getByRole("region", { name: "Decide" });
    this.reason = this.panel.getByLabel("Reason (required)");
    this.alert = this.panel.getByRole("alert");
    this.done = this.panel.locator(".notice--success, .notice--info[role=status]");
    this.readOnly = page.getByRole("region", { name: "Read-only" });
  }

  async goto(reviewId: string): Promise<void> {
    await this.page.goto(`/reviews/${encodeURIComponent(reviewId)}`);
  }

  reviewId(): string {
    return decodeURIComponent(new URL(this.page.url()).pathname.split("/").pop() ?? "");
  }

  button(name: ReviewDecisionButton): Locator {
    return this.panel.getByRole("button", { name, exact: true });
  }

  async decide(name: ReviewDecisionButton, reason: string): Promise<void> {
    await this.reason.fill(reason);
    await this.button(name).click();
  }

  /** Stops this page's live poll, so it keeps showing what it first rendered (to race another operator on purpose). */
  async pauseLiveUpdates(): Promise<void> {
    await this.page.route("**/api/console/**", (route) => route.abort());
  }
}
