import { expect, test } from "@playwright/test";
import { copyWith, expectPageFits, wide } from "../pages/look";
import { signIn } from "../pages/login-page";

/**
 * /executions/[id]: one external call of the demo data on its own page —
 * its request, result, evidence, events, review and task — reached from the
 * executions list, a task's external effects and a review.
 */
test.use({ viewport: wide, permissions: ["clipboard-read", "clipboard-write"] });
// Each test checks two or three pages with axe at two widths: more than the default time on a busy machine.
test.describe.configure({ timeout: 180_000 });

test("the executions list and a task link to an execution's page, which shows the whole call", async ({ page }) => {
  await signIn(page, "operator", "/executions");
  const link = page.getByRole("main").locator('table tbody tr th a[href^="/executions/"]').first();
  const id = ((await link.textContent()) ?? "").trim();
  expect(id).not.toBe("");
  // By keyboard: a pointer's hover widens the row to show its full values, which moves the link under it (issue 13).
  await link.focus();
  await page.keyboard.press("Enter");
  // The page is server-rendered before the URL changes: on a busy machine that takes more than the default 10 s.
  await expect(page).toHaveURL(`/executions/${encodeURIComponent(id)}`, { timeout: 30_000 });

  const main = page.getByRole("main");
  await expect(main.getByRole("heading", { level: 1 })).toHaveText(`Execution ${id}`);
  for (const name of ["Call", "Evidence", "Events", "Task", "Review"]) {
    await expect(main.getByRole("heading", { level: 2, name, exact: true })).toBeVisible();
  }
  await expect(main.getByRole("heading", { level: 3, name: "Request" })).toBeVisible();
  await expect(main.getByRole("heading", { level: 3, name: "Result" })).toBeVisible();
  await expect(main.locator(".exec-events__item").first()).toBeVisible();
  expect(await copyWith(main.getByRole("button", { name: "Copy execution id" }))).toBe(id);
  await expectPageFits(page, "execution");

  // Its task's page lists the call in its external effects, linked back here.
  const taskHref = await main
    .getByRole("region", { name: "Task", exact: true })
    .locator('a[href^="/tasks/"]')
    .getAttribute("href");
  await page.setViewportSize(wide);
  await page.goto(taskHref!);
  await page.locator(`a[href="/executions/${encodeURIComponent(id)}"]`).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Execution ${id}`);
});

test("a frozen demo refund's execution shows its review, and an unknown id is a page with an h1", async ({ page }) => {
  await signIn(page, "operator", "/reviews");
  const reviewLink = page.getByRole("main").locator('a[href^="/reviews/"]').first();
  const reviewHref = await reviewLink.getAttribute("href");
  await page.goto(reviewHref!);
  const execLink = page.getByRole("main").locator('a[href^="/executions/"]').first();
  const id = ((await execLink.textContent()) ?? "").trim();
  await execLink.click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Execution ${id}`);
  const review = page.getByRole("region", { name: "Review", exact: true });
  await expect(review.locator(`a[href="${reviewHref}"]`)).toBeVisible();
  await expect(page.getByRole("main")).toContainText("NEEDS_HUMAN");
  await expectPageFits(page, "execution-frozen");

  await page.goto("/executions/no-such-execution");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("No such execution");
  await expectPageFits(page, "execution-not-found");
});
