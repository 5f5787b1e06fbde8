import type { Locator, Page } from "@playwright/test";

export class TaskDetailPage {
  readonly title: Locator;
  readonly status: Locator;
  readonly version: Locator;
  readonly graph: Locator;
  readonly nextSteps: Locator;
  readonly timelineItems: Locator;
  readonly reason: Locator;
  readonly transitionPanel: Locator;
  readonly readOnlyNotice: Locator;
  readonly alert: Locator;
  readonly success: Locator;

  constructor(readonly page: Page) {
    this.title = page.locator("h1.task-title");
    this.status = page.locator(".task-title__status .badge");
    this.version = page.locator(".task-title__status .version-pill");
    this.graph = page.getByRole("img", { name: /State machine of/ });
    this.nextSteps = page.getByRole("region", { name: /Next steps from/ });
    this.timelineItems = page.locator("ol.timeline > li");
    this.transitionPanel = page.getByRole("region", { name: "Take a transition" });
    this.reason = this.transitionPanel.getByLabel("Reason");
    this.readOnlyNotice = page.getByRole("region", { name: "Read-only" });
    this.alert = this.transitionPanel.getByRole("alert");
    this.success = this.transitionPanel.locator(".notice--success");
  }

  async goto(taskId: string): Promise<void> {
    await this.page.goto(`/tasks/${encodeURIComponent(taskId)}`);
  }

  /** The button of the edge into `to`: its accessible name is "<description> to <STATE>". */
  transitionButton(to: string): Locator {
    return this.transitionPanel.getByRole("button", { name: new RegExp(` to ${to}$`) });
  }

  allTransitionButtons(): Locator {
    return this.page.locator("form.transition-form button[type=submit]");
  }

  async take(to: string, reason?: string): Promise<void> {
    if (reason !== undefined) await this.reason.fill(reason);
    await this.transitionButton(to).click();
  }

  /** Stops the live poll in this page, so the page keeps showing what it first rendered (to race a change on purpose). */
  async pauseLiveUpdates(): Promise<void> {
    await this.page.route("**/api/console/**", (route) => route.abort());
  }
}
