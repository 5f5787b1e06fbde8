import { expect, test } from "@playwright/test";
import { createRunningTask } from "../pages/agent-seed";
import { copyWith, expectPageFits, wide } from "../pages/look";
import { signIn } from "../pages/login-page";

/**
 * Times read as "12 min ago" with the exact UTC moment in the tooltip and in
 * the accessible text, in one format on every list; ids and keys have a copy
 * button that puts the whole value on the clipboard and says "Copied".
 */
test.use({ viewport: wide, permissions: ["clipboard-read", "clipboard-write"] });

const relative = /^(just now|\d+ (s|min|h|d)( \d+ (min|h))? ago|\d{2} [A-Z][a-z]{2} \d{4})$/;
const exactUtc = /^\d{2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}:\d{2} UTC$/;

test("lists show relative times with the exact UTC time, and copy ids and keys", async ({ page, request }) => {
  // Three pages, each checked by axe and pictured at two widths: more than one default test's time on a busy machine.
  test.setTimeout(180_000);
  const task = await createRunningTask(request);
  await signIn(page, "operator", `/tasks?q=${encodeURIComponent(task.id)}`);

  const row = page.getByRole("main").locator("table tbody tr").first();
  await expect(row).toContainText(task.id);
  // The Updated column's time (the row also shows when the task was created).
  const time = row.locator("time").first();
  await expect(time).toHaveAttribute("title", exactUtc);
  const [visible, title] = await Promise.all([
    time.evaluate((t) => t.firstChild?.textContent ?? ""),
    time.getAttribute("title"),
  ]);
  expect(visible).toMatch(relative);
  // Read by a screen reader as the words and the exact moment.
  expect(await time.textContent()).toContain(` (${title})`);

  expect(await copyWith(row.getByRole("button", { name: "Copy task id" }))).toBe(task.id);
  await expectPageFits(page, "tasks");

  // The executions list: the whole idempotency key, however the column cuts it.
  await page.setViewportSize(wide);
  await page.goto("/executions");
  const execRow = page.getByRole("main").locator("table tbody tr").first();
  const key = (await execRow.locator("td .truncate.mono").last().textContent()) ?? "";
  expect(key.length).toBeGreaterThan(10);
  expect(await copyWith(execRow.getByRole("button", { name: "Copy idempotency key" }))).toBe(key);
  await expect(execRow.locator("time").last()).toHaveAttribute("title", exactUtc);
  await expectPageFits(page, "executions");

  // A task's page: its id and intent copy, its times are relative.
  await page.goto(`/tasks/${encodeURIComponent(task.id)}`);
  expect(await copyWith(page.getByRole("button", { name: "Copy task id" }))).toBe(task.id);
  await expect(page.locator("header time").first()).toHaveAttribute("title", exactUtc);
  await expectPageFits(page, "task");
});
