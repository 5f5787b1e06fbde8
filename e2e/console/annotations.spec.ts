import { expect, test } from "@playwright/test";
import { createRunningTask } from "../pages/agent-seed";
import { TaskHistoryPage } from "../pages/audit-page";
import { signIn } from "../pages/login-page";

/**
 * A person corrects the record from a task's history: the row's Annotate
 * button picks the entry, a blank correction is refused in words, and the
 * annotation added appears in the history at once, as an entry of its own.
 */
test.use({ viewport: { width: 1280, height: 900 } });

test("an operator annotates the task's creation from its history page", async ({ page, request }) => {
  const task = await createRunningTask(request);
  await signIn(page, "operator", `/tasks/${task.id}/history`);
  const history = new TaskHistoryPage(page);
  await expect(history.heading).toContainText(task.id);
  const created = history.rows.filter({ hasText: "Task created in RECEIVED" });
  await expect(created).toHaveCount(1);
  const entryId = await created.getAttribute("data-entry-id");

  await created.getByRole("button", { name: /^Annotate entry task:.* #1: Task created/ }).click();
  const form = page.getByRole("form", { name: "Add a correction annotation" });
  await expect(form.getByLabel("Audit entry")).toHaveValue(entryId!);

  // A blank note changes nothing and says why.
  await form.getByRole("button", { name: "Add annotation" }).click();
  await expect(form.getByRole("alert").first()).toContainText("Nothing was added");
  await expect(form.getByRole("alert").first()).toContainText("a blank annotation corrects nothing");
  await expect(history.rows.filter({ hasText: "Correction annotated" })).toHaveCount(0);

  await form.getByLabel("Correction (required)").fill("Created for order 42; the customer's order was 43.");
  await form.getByRole("button", { name: "Add annotation" }).click();
  await expect(form.getByRole("status")).toContainText("bound to the entry it corrects");
  const annotated = history.rows.filter({ hasText: "Correction annotated" });
  await expect(annotated).toHaveCount(1);
  await expect(annotated).toContainText("the customer's order was 43");
  await expect(annotated).toContainText("operator");
});

test("an auditor annotates an entry from the audit log's search", async ({ page, request }) => {
  const task = await createRunningTask(request);
  await signIn(page, "auditor", `/audit?task=${encodeURIComponent(task.id)}&action=task.created`);
  const entry = page.locator(".audit-results > li.audit-row");
  await expect(entry).toHaveCount(1);
  const entryId = await entry.getAttribute("data-entry-id");

  await entry.getByText("Annotate", { exact: true }).click();
  const form = page.getByRole("form", { name: `Add a correction annotation to entry ${entryId}` });
  await form.getByLabel("Correction (required)").fill("Opened by the wrong agent; it was refund-bot-2.");
  await form.getByRole("button", { name: "Add annotation" }).click();
  await expect(form.getByRole("status")).toContainText("bound to the entry it corrects");

  // The annotation is an entry of the log: the search for annotations of this task finds it, by the auditor.
  await page.goto(`/audit?task=${encodeURIComponent(task.id)}&action=annotation.added`);
  const annotation = page.locator(".audit-results > li.audit-row");
  await expect(annotation).toHaveCount(1);
  await expect(annotation).toContainText("Correction annotated");
  await expect(annotation).toContainText("it was refund-bot-2");
  await expect(annotation).toContainText("auditor");
});
