import { expect, test } from "@playwright/test";
import { LoginPage, signIn } from "../pages/login-page";

test.describe("signing in and out", () => {
  test("an unauthenticated visit redirects to /login and comes back after signing in", async ({ page }) => {
    for (const path of ["/tasks", "/workflows", "/tasks/task_does_not_matter"]) {
      await page.goto(path);
      await expect(page).toHaveURL((url) => url.pathname === "/login" && url.searchParams.get("callbackUrl") === path);
    }
    await page.goto("/workflows");
    const login = new LoginPage(page);
    await login.fill("operator", "operator-demo");
    await expect(page).toHaveURL(/\/workflows$/);
    await expect(page.getByRole("heading", { level: 1, name: "Workflows" })).toBeVisible();
  });

  test("a wrong password shows an error in words and keeps the person on /login", async ({ page }) => {
    const login = new LoginPage(page);
    await login.goto();
    await login.fill("operator", "not-the-password");
    await expect(login.error).toHaveText("That username and password do not match. Check both and try again.");
    await expect(page).toHaveURL(/\/login/);
    await expect(login.password).toBeFocused();
    await expect(login.password).toHaveValue("");
    // An unknown user gets the same words: the page does not reveal which usernames exist.
    await login.fill("nobody", "whatever");
    await expect(login.error).toHaveText("That username and password do not match. Check both and try again.");
  });

  test("the shell names the user and role, and signing out ends the session", async ({ page }) => {
    await signIn(page, "auditor");
    const header = page.getByRole("banner");
    await expect(header).toContainText("Ada Auditor");
    await expect(header).toContainText("auditor");
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Tasks" })).toHaveAttribute(
      "aria-current",
      "page",
    );
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/login/);
    await page.goto("/tasks");
    await expect(page).toHaveURL(/\/login\?callbackUrl=%2Ftasks/);
  });

  test("the console's JSON routes refuse requests without a session", async ({ request }) => {
    const version = await request.get("/api/console/tasks/anything/version");
    expect(version.status()).toBe(401);
    const latest = await request.get("/api/console/tasks/latest");
    expect(latest.status()).toBe(401);
  });

  test("the skip link is the first thing the keyboard reaches and moves focus to the content", async ({ page }) => {
    await signIn(page, "operator");
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to main content" });
    await expect(skip).toBeFocused();
    await page.keyboard.press("Enter");
    await expect(page).toHaveURL(/#main$/);
  });
});
