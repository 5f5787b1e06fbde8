import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask, transition, type SeededTask } from "./agent-seed";

const agentAuth = { Authorization: `Bearer ${demoAgent.token}` };

/**
 * A real stale write through the agent API: the agent reads its task at
 * RUNNING, the task is cancelled, the agent writes on its old version and is
 * refused (409). The refusal is a write_conflicts row; a monitor pass (asked
 * for with a signed-in operator's session, `session`) raises the alert.
 * Returns the task and the alert id.
 */
export async function seedStaleWriteAlert(
  request: APIRequestContext,
  session: APIRequestContext,
): Promise<{ task: SeededTask; alertId: string }> {
  const running = await createRunningTask(request);
  const cancelled = await transition(request, running, { to: "CANCELLED", reason: "customer withdrew the request" });
  const stale = await request.post(`/api/v1/tasks/${encodeURIComponent(running.id)}/transitions`, {
    data: { expected_version: running.version, to: "WAITING_FOR_HUMAN", reason: "a worker still working on RUNNING" },
    headers: agentAuth,
  });
  expect(stale.status()).toBe(409);
  let alertId: string | undefined;
  // The monitor reads refusals a moment old (rows still committing are left for the next pass), and a background pass may be running: ask until it is raised.
  await expect
    .poll(
      async () => {
        const run = await session.post("/api/v1/monitor/runs", { data: { only: ["write_conflicts"] } });
        expect([200, 201]).toContain(run.status());
        const list = await session.get(`/api/v1/alerts?task=${encodeURIComponent(running.id)}&kind=stale_write`);
        expect(list.ok()).toBe(true);
        const body = (await list.json()) as { items: Array<{ id: string }> };
        alertId = body.items[0]?.id;
        return body.items.length;
      },
      { timeout: 30_000, intervals: [500, 1000, 2000] },
    )
    .toBe(1);
  return { task: cancelled, alertId: alertId! };
}

export class AlertsPage {
  readonly filters: Locator;
  readonly table: Locator;
  readonly monitor: Locator;

  constructor(readonly page: Page) {
    this.filters = page.getByRole("search", { name: "Filter alerts" });
    this.table = page.getByRole("table");
    this.monitor = page.getByRole("region", { name: "Invariant monitor" });
  }

  async goto(query = ""): Promise<void> {
    await this.page.goto(`/alerts${query}`);
    await expect(this.page.getByRole("heading", { level: 1, name: "Alerts" })).toBeVisible();
  }

  async filter(options: { status?: string; severity?: string; kind?: string; task?: string }): Promise<void> {
    if (options.status) await this.filters.getByLabel("Status").selectOption({ label: options.status });
    if (options.severity) await this.filters.getByLabel("Severity").selectOption({ label: options.severity });
    if (options.kind) await this.filters.getByLabel("Kind").selectOption({ label: options.kind });
    if (options.task) await this.filters.getByLabel("Task id").fill(options.task);
    await this.filters.getByRole("button", { name: "Apply" }).click();
  }

  row(taskId: string): Locator {
    return this.table.getByRole("row").filter({ hasText: taskId });
  }
}

export class AlertDetailPage {
  readonly title: Locator;
  readonly reason: Locator;
  readonly history: Locator;
  readonly actions: Locator;

  constructor(readonly page: Page) {
    this.title = page.getByRole("heading", { level: 1 });
    this.reason = page.getByLabel("Reason (required)");
    this.history = page.getByRole("region", { name: "History" });
    this.actions = page.getByRole("region", { name: "Actions" });
  }

  button(name: string): Locator {
    return this.actions.getByRole("button", { name });
  }

  /** Stops the live poll in this page, so the page keeps showing what it first rendered (to race a change on purpose). */
  async pauseLiveUpdates(): Promise<void> {
    await this.page.route("**/api/console/**", (route) => route.abort());
  }
}
