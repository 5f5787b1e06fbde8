import { expect, test } from "@playwright/test";
import { expectPageFits } from "../pages/look";
import { signIn } from "../pages/login-page";

/**
 * The pages a person lands on by mistake — an address with nothing at it, a
 * task that does not exist, a page their role may not open — fit a phone and
 * a wide screen, name themselves in an h1 and pass axe.
 */
test("not-found and forbidden pages fit both widths with their h1 and no axe finding", async ({ page }) => {
  await signIn(page, "auditor", "/tasks");
  for (const [path, heading, name] of [
    ["/no-such-page", "Page not found", "not-found"],
    ["/tasks/no-such-task", "No such task", "task-not-found"],
    ["/admin/people", "You cannot open this page", "forbidden"],
  ] as const) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(heading);
    await expectPageFits(page, name);
  }
});
