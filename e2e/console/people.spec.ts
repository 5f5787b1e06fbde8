import { expect, test } from "@playwright/test";
import { AccountPage } from "../pages/account-page";
import { LoginPage, signIn } from "../pages/login-page";
import { PeoplePage } from "../pages/people-page";

const answer = 30_000;

test.describe("people", () => {
  test("an admin creates a person who signs in with the initial password; disabled, their open session ends and sign-in is refused", async ({
    page,
    browser,
  }) => {
    test.setTimeout(180_000);
    const username = `e2e-${Date.now().toString(36)}`;
    await signIn(page, "admin", "/admin/people");
    const people = new PeoplePage(page);
    await expect(people.heading).toBeVisible();
    // Under the header's Admin menu.
    await page.getByRole("navigation", { name: "Main" }).getByRole("button", { name: "Admin" }).click();
    await expect(page.getByRole("link", { name: "People" })).toBeVisible();
    const password = await people.create(username, "Olga E2E", "operator");
    await expect(people.row(username)).toContainText("operator");

    const theirs = await browser.newContext();
    const them = await theirs.newPage();
    const login = new LoginPage(them);
    await login.goto("/tasks");
    await login.fill(username, password);
    // The initial password is one-time: they choose their own first (e2e/console/passwords.spec.ts).
    await them.waitForURL((url) => url.pathname === "/account");
    await new AccountPage(them).replaceOneTimePassword(password, "olga's own passphrase");
    await them.goto("/tasks");
    // An operator has no People section.
    await expect(them.getByRole("link", { name: "People" })).toHaveCount(0);

    await people.row(username).getByRole("button", { name: "Disable" }).click();
    await expect(people.row(username)).toContainText("disabled", { timeout: answer });

    // Their next request finds the session ended (the disable ended all of their console sessions).
    await them.goto("/tasks");
    await them.waitForURL((url) => url.pathname === "/login");
    await login.fill(username, "olga's own passphrase");
    await expect(login.error).toBeVisible({ timeout: answer });
    await theirs.close();
  });

  test("an operator cannot open People; a setup link that does not work says why", async ({ page }) => {
    await signIn(page, "operator", "/admin/people");
    await expect(page.getByText("people:manage")).toBeVisible();
    await page.goto("/setup?token=vst_not_a_real_link");
    await expect(page.getByRole("alert").filter({ hasText: "This setup link does not work" })).toBeVisible();
    await expect(page.getByRole("form", { name: "Create the first admin" })).toHaveCount(0);
  });
});
