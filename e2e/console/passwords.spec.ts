import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { AccountPage } from "../pages/account-page";
import { axeViolations } from "../pages/axe";
import { LoginPage, signIn } from "../pages/login-page";
import { PeoplePage } from "../pages/people-page";
import { captureServerAction, replayServerAction } from "../pages/server-action";

const answer = 30_000;
const dir = "test-results/console-screenshots";

/**
 * Passwords (issue 11): a one-time password an admin handed over must be
 * replaced before the console serves anything else; a person changes their
 * own at /account (a wrong current password is refused in words); an
 * admin's reset ends the person's open sessions at once. The people are
 * made here, so no other spec shares their sessions.
 */

async function newPerson(
  people: PeoplePage,
  prefix: string,
  name: string,
): Promise<{ username: string; password: string }> {
  const username = `${prefix}-${Date.now().toString(36)}`;
  const password = await people.create(username, name, "operator");
  return { username, password };
}

async function signInElsewhere(
  browser: Browser,
  username: string,
  password: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const login = new LoginPage(page);
  await login.goto("/tasks");
  await login.fill(username, password);
  await page.waitForURL((url) => url.pathname !== "/login", { timeout: answer });
  return { context, page };
}

test.describe("passwords", () => {
  test("a one-time password sends its holder to /account until they choose their own; then the console is theirs", async ({
    page,
    browser,
  }) => {
    test.setTimeout(240_000);
    await signIn(page, "admin", "/admin/people");
    const people = new PeoplePage(page);
    const { username, password } = await newPerson(people, "e2e-pw", "Petra Password");
    await expect(people.row(username)).toContainText("one-time password, not yet replaced");
    // An admin's action, captured to be sent again by the person while their password is one-time.
    const roleChange = await captureServerAction(page, async () => {
      await people.row(username).getByRole("button", { name: "Change role" }).click();
    });

    const { context, page: them } = await signInElsewhere(browser, username, password);
    try {
      const account = new AccountPage(them);
      // Signed in for /tasks, sent to /account instead; every other page sends them back there.
      await expect(them).toHaveURL((url) => url.pathname === "/account");
      await expect(account.mustChange).toBeVisible();
      await them.goto("/tasks");
      await expect(them).toHaveURL((url) => url.pathname === "/account");
      await them.goto("/dashboard");
      await expect(them).toHaveURL((url) => url.pathname === "/account");
      // The header offers no section, only the account and signing out.
      await expect(them.getByRole("navigation", { name: "Main" }).getByRole("link")).toHaveCount(0);
      await expect(them.getByRole("button", { name: "Sign out" })).toBeVisible();
      // The console's own JSON routes and server actions refuse them too, whatever the page showed.
      const poll = await them.request.get("/api/console/tasks/latest");
      expect(poll.status()).toBe(401);
      const replayed = await replayServerAction(them.request, roleChange);
      expect(await replayed.text()).toContain("one-time password");

      for (const width of [390, 1440]) {
        await them.setViewportSize({ width, height: 900 });
        expect(await axeViolations(them)).toEqual([]);
        await them.screenshot({ path: `${dir}/account-one-time-${width}.png`, fullPage: true });
      }

      // A wrong current password: refused in words under its field, nothing changed.
      await account.submit("not the one-time password", "petra's own passphrase");
      await expect(account.fieldError("One-time password")).toHaveText("Is not your current password.", {
        timeout: answer,
      });
      await expect(account.form.getByRole("alert")).toContainText("Nothing was changed");
      await expect(account.form.getByLabel("One-time password")).toHaveAttribute("aria-invalid", "true");
      expect(await axeViolations(them)).toEqual([]);
      await them.screenshot({ path: `${dir}/account-wrong-current-1440.png`, fullPage: true });
      // The username is no password, whatever its case.
      await account.submit(password, username.toUpperCase());
      await expect(account.fieldError("New password")).toHaveText("Must not be your username.", { timeout: answer });
      await account.submit(password, "petra's own passphrase", "petra's own passphrase, typo");
      await expect(account.fieldError("New password again")).toHaveText(
        "Does not match the new password: type it again.",
        { timeout: answer },
      );
      await them.setViewportSize({ width: 390, height: 900 });
      await them.screenshot({ path: `${dir}/account-mismatch-390.png`, fullPage: true });
      await them.setViewportSize({ width: 1440, height: 900 });

      await account.submit(password, "petra's own passphrase");
      await expect(account.changed).toContainText("Your password is changed", { timeout: answer });
      await expect(account.changed).toContainText("This browser stays signed in");
      await them.screenshot({ path: `${dir}/account-changed-1440.png`, fullPage: true });
      await account.changed.getByRole("link", { name: "Continue to the tasks" }).click();
      await expect(them).toHaveURL((url) => url.pathname === "/tasks");
      await expect(them.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Tasks" })).toBeVisible();
      await people.page.reload();
      await expect(people.row(username)).not.toContainText("one-time");

      // The header's name opens the account page, which now asks for the current password.
      await them.getByRole("link", { name: /Your account/ }).click();
      await expect(account.heading).toBeVisible();
      await expect(account.mustChange).toHaveCount(0);
      await expect(account.form.getByLabel("Current password")).toBeVisible();
      for (const width of [390, 1440]) {
        await them.setViewportSize({ width, height: 900 });
        expect(await axeViolations(them)).toEqual([]);
        await them.screenshot({ path: `${dir}/account-${width}.png`, fullPage: true });
      }

      // The one-time password is spent; the new one signs in straight to the console.
      await them.getByRole("button", { name: "Sign out" }).click();
      await them.waitForURL((url) => url.pathname === "/login");
      const login = new LoginPage(them);
      await login.fill(username, password);
      await expect(login.error).toBeVisible({ timeout: answer });
      await login.fill(username, "petra's own passphrase");
      await them.waitForURL((url) => url.pathname === "/tasks", { timeout: answer });
    } finally {
      await context.close();
    }
  });

  test("an admin's reset ends the person's open session in their browser; the new one-time password must be replaced", async ({
    page,
    browser,
  }) => {
    test.setTimeout(240_000);
    await signIn(page, "admin", "/admin/people");
    const people = new PeoplePage(page);
    const { username, password } = await newPerson(people, "e2e-reset", "Rhea Reset");
    const { context, page: them } = await signInElsewhere(browser, username, password);
    try {
      await new AccountPage(them).replaceOneTimePassword(password, "rhea's own passphrase");
      await them.goto("/tasks");
      await expect(them).toHaveURL((url) => url.pathname === "/tasks");

      await people.page.reload();
      const row = people.row(username);
      await row.getByRole("button", { name: "Reset password…" }).click();
      const confirm = row.getByRole("form", { name: `Reset the password of ${username}` });
      await expect(confirm).toContainText("their open sessions end now");
      await expect(confirm.getByRole("button", { name: "Reset password" })).toBeFocused();
      expect(await axeViolations(page)).toEqual([]);
      await confirm.getByRole("button", { name: "Reset password" }).click();
      const oneTime = row.getByTestId("one-time-password");
      await expect(oneTime).toBeVisible({ timeout: answer });
      await expect(row).toContainText("1 open session ended");
      const newPassword = (await oneTime.textContent())!.trim();
      expect(newPassword).not.toBe(password);
      for (const width of [390, 1440]) {
        await page.setViewportSize({ width, height: 900 });
        expect(await axeViolations(page)).toEqual([]);
        await page.screenshot({ path: `${dir}/people-reset-${width}.png`, fullPage: true });
      }

      // Their next request finds the session ended; their own password no longer works, the new one-time one does, for /account only.
      await them.goto("/tasks");
      await them.waitForURL((url) => url.pathname === "/login");
      const login = new LoginPage(them);
      await login.fill(username, "rhea's own passphrase");
      await expect(login.error).toBeVisible({ timeout: answer });
      await login.fill(username, newPassword);
      await them.waitForURL((url) => url.pathname === "/account", { timeout: answer });
      await expect(new AccountPage(them).mustChange).toBeVisible();
    } finally {
      await context.close();
    }
  });

  test("an admin's own account has no reset: they change their password at /account with the current one", async ({
    page,
  }) => {
    await signIn(page, "admin", "/admin/people");
    const people = new PeoplePage(page);
    await expect(people.row("admin")).toContainText("(you)");
    await expect(people.row("admin").getByRole("button", { name: "Reset password…" })).toHaveCount(0);
    await expect(people.row("operator").getByRole("button", { name: "Reset password…" })).toBeVisible();
  });
});
