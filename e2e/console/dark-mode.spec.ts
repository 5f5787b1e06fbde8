import { expect, test } from "@playwright/test";
import { expectPageFits } from "../pages/look";
import { LoginPage, signIn } from "../pages/login-page";

/**
 * With the system set to dark, the console is dark (it follows
 * prefers-color-scheme) and every page keeps readable contrast: axe's
 * color-contrast rule runs with the rest, at a phone's width and a wide
 * screen's.
 */
test.use({ colorScheme: "dark" });

test("pages follow the system's dark setting with no axe finding", async ({ page }) => {
  test.setTimeout(300_000);
  const login = new LoginPage(page);
  await login.goto();
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(background).toBe("rgb(14, 17, 22)");
  await expectPageFits(page, "login");

  await signIn(page, "admin", "/dashboard");
  const paths: Array<[string, string]> = [
    ["/dashboard", "dashboard"],
    ["/tasks", "tasks"],
    ["/executions", "executions"],
    ["/reviews", "reviews"],
    ["/alerts", "alerts"],
    ["/audit", "audit"],
    ["/workflows", "workflows"],
    ["/admin/people", "people"],
    ["/account", "account"],
  ];
  for (const [path, name] of paths) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
    await expectPageFits(page, name);
  }
  // A record of each kind, from the demo data: a task, its execution, a review, a checkpoint.
  for (const [list, selector, name] of [
    ["/tasks", 'main table tbody a[href^="/tasks/"]', "task"],
    ["/executions", 'main table tbody a[href^="/executions/"]', "execution"],
    ["/reviews", 'main a[href^="/reviews/"]', "review"],
  ] as const) {
    await page.goto(list);
    await page.goto((await page.locator(selector).first().getAttribute("href"))!);
    await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
    await expectPageFits(page, name);
  }
});
