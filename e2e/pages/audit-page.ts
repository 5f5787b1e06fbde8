import { expect, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";

/** Page objects of the auditors' console: /audit (search, verify, export) and a task's history. */

export class AuditSearchPage {
  readonly heading: Locator;
  readonly results: Locator;
  readonly errors: Locator;
  readonly verifyButton: Locator;
  readonly verifyResult: Locator;
  readonly exportSection: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: "Audit log" });
    this.results = page.locator("ol.audit-results > li");
    this.errors = page.getByRole("alert").filter({ hasText: "The search cannot run with these filters" });
    this.verifyButton = page.getByRole("button", { name: "Verify chain" });
    this.verifyResult = page.locator(".audit-badge[role=status]");
    this.exportSection = page.getByRole("region", { name: "Export" });
  }

  async goto(query = ""): Promise<void> {
    await this.page.goto(`/audit${query ? `?${query}` : ""}`);
  }

  filter(label: string | RegExp): Locator {
    return this.page.getByRole("search", { name: "Search the audit log" }).getByLabel(label);
  }

  async search(): Promise<void> {
    await this.page
      .getByRole("search", { name: "Search the audit log" })
      .getByRole("button", { name: "Search", exact: true })
      .click();
    await this.page.waitForURL(/\/audit\?/);
  }

  /** Clicks a download button of the export form and returns the file's text. */
  async download(format: "CSV" | "JSON Lines"): Promise<{ name: string; text: string }> {
    const [download] = await Promise.all([
      this.page.waitForEvent("download"),
      this.exportSection.getByRole("button", { name: `Download ${format}` }).click(),
    ]);
    const stream = await download.createReadStream();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
    return { name: download.suggestedFilename(), text: Buffer.concat(chunks).toString("utf8") };
  }
}

export class TaskHistoryPage {
  readonly heading: Locator;
  readonly viewport: Locator;
  readonly rows: Locator;
  readonly status: Locator;
  readonly badge: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { level: 1, name: /^History of/ });
    this.viewport = page.locator(".audit-history__viewport");
    this.rows = page.locator(".audit-history__list > li.audit-row:not(.audit-row--loading)");
    this.status = page.locator(".audit-history__status");
    this.badge = page.locator(".audit-badge").first();
  }

  async goto(taskId: string, query = ""): Promise<void> {
    await this.page.goto(`/tasks/${encodeURIComponent(taskId)}/history${query ? `?${query}` : ""}`);
  }

  filters(): Locator {
    return this.page.getByRole("search", { name: "Filter the history" });
  }

  async apply(): Promise<void> {
    await this.filters().getByRole("button", { name: "Apply" }).click();
  }

  /** How many rows the timeline has loaded (not how many are in the DOM). */
  async loaded(): Promise<number> {
    return Number(await this.viewport.getAttribute("data-loaded"));
  }
}

/** An execution's idempotency key, read back through the agent API. */
export async function idempotencyKeyOf(request: APIRequestContext, executionId: string): Promise<string> {
  const res = await request.get(`/api/v1/executions/${executionId}`, {
    headers: { Authorization: `Bearer ${demoAgent.token}` },
  });
  expect(res.ok(), await res.text()).toBe(true);
  const body = (await res.json()) as { idempotency_key?: string; execution?: { idempotency_key: string } };
  return body.idempotency_key ?? body.execution!.idempotency_key;
}
