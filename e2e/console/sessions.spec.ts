import { expect, test, type Page } from "@playwright/test";
import { AccountPage } from "../pages/account-page";
import { LoginPage, signIn } from "../pages/login-page";
import { PeoplePage } from "../pages/people-page";

const answer = 30_000;

/**
 * Each sign-in is its own session: one person signed in on two browsers
 * (a phone and a laptop) signs out on one and keeps working on the other.
 * An administrator's role change and disable, though, reach every browser of
 * that person on its next request. The person is made here, so no other
 * spec shares their sessions.
 */
test.describe("sessions", () => {
  test("sign-out ends that browser's session only; a role change and a disable reach the other on its next request", async ({
    page,
    browser,
  }) => {
    test.setTimeout(240_000);
    const username = `e2e-ses-${Date.now().toString(36)}`;
    await signIn(page, "admin", "/admin/people");
    const people = new PeoplePage(page);
    await expect(people.heading).toBeVisible();
    const initialPassword = await people.create(username, "Sam Sessions", "operator");
    const password = "sam's own passphrase";

    const phoneContext = await browser.newContext();
    const laptopContext = await browser.newContext();
    const phone = await phoneContext.newPage();
    const laptop = await laptopContext.newPage();
    const signInThere = async (there: Page) => {
      const login = new LoginPage(there);
      await login.goto("/tasks");
      await login.fill(username, password);
      await there.waitForURL((url) => url.pathname === "/tasks", { timeout: answer });
      await expect(there.getByRole("banner")).toContainText("Sam Sessions");
    };
    const expectSignedOut = async (there: Page) => {
      await there.goto("/tasks");
      await there.waitForURL((url) => url.pathname === "/login", { timeout: answer });
    };
    try {
      // The initial password is one-time: replaced first (e2e/console/passwords.spec.ts), on a browser of its own.
      const first = await browser.newContext();
      const firstPage = await first.newPage();
      const firstLogin = new LoginPage(firstPage);
      await firstLogin.goto("/tasks");
      await firstLogin.fill(username, initialPassword);
      await firstPage.waitForURL((url) => url.pathname === "/account", { timeout: answer });
      await new AccountPage(firstPage).replaceOneTimePassword(initialPassword, password);
      await first.close();

      await signInThere(phone);
      await signInThere(laptop);

      await phone.getByRole("button", { name: "Sign out" }).click();
      await phone.waitForURL((url) => url.pathname === "/login", { timeout: answer });
      await expectSignedOut(phone);
      // The laptop's session is its own: it still serves pages.
      await laptop.goto("/tasks");
      await expect(laptop).toHaveURL((url) => url.pathname === "/tasks");
      await expect(laptop.getByRole("banner")).toContainText("operator");

      // The admin makes them an auditor: the laptop's next request finds its session ended.
      const row = people.row(username);
      await row.getByLabel(`Role of ${username}`, { exact: true }).selectOption("auditor");
      await row.getByRole("button", { name: "Change role" }).click();
      // The role cell, not the row: the row's role picker lists "auditor" from the start.
      await expect(row.getByRole("cell", { name: "auditor", exact: true })).toBeVisible({ timeout: answer });
      await expectSignedOut(laptop);
      await signInThere(laptop);
      await expect(laptop.getByRole("banner")).toContainText("auditor");
      await expect(
        laptop.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit log" }),
      ).toBeVisible();

      // Disabled: the laptop's session ends, and the password no longer signs in.
      await row.getByRole("button", { name: "Disable" }).click();
      await expect(row.getByRole("cell", { name: /^disabled/ })).toBeVisible({ timeout: answer });
      await expectSignedOut(laptop);
      const login = new LoginPage(laptop);
      await login.fill(username, password);
      await expect(login.error).toBeVisible({ timeout: answer });
    } finally {
      await phoneContext.close();
      await laptopContext.close();
    }
  });
});
