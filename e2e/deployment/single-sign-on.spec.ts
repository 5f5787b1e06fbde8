/**
 * Issue 11, single sign-on, end to end in the browser: the "real
 * deployment" server of playwright.config.ts is configured by VERITY_OIDC_*
 * for a real OpenID Connect provider (oidc-provider, e2e/oidc/provider.ts).
 * People sign in on the provider's own pages; the groups claim of its ID
 * token maps to a Verity role by VERITY_OIDC_ROLE_MAP; a person whose
 * groups map to nothing is refused, in words that say why, and gets no
 * account.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { LoginPage } from "../pages/login-page";
import { PeoplePage } from "../pages/people-page";
import { axeViolations } from "../pages/axe";
import { oidcAccounts, type OidcAccount } from "../oidc/accounts";
import { deployment, oidcProvider } from "./servers";

const answer = 30_000;

/** Verity's sign-in page → "Sign in with single sign-on" → the provider's sign-in and consent → back to Verity. */
async function signInWithSso(
  page: Page,
  account: OidcAccount,
  callbackUrl = "/tasks",
  consent: "Allow" | "Deny" = "Allow",
): Promise<void> {
  const login = new LoginPage(page);
  await login.goto(callbackUrl);
  await page.getByRole("button", { name: "Sign in with single sign-on" }).click();
  await page.waitForURL((url) => url.origin === oidcProvider.issuer && url.pathname.startsWith("/interaction/"), {
    timeout: answer,
  });
  await expect(page.getByRole("heading", { name: "Sign in", level: 1 })).toBeVisible();
  await page.getByLabel("Username").fill(account.login);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Allow Verity?", level: 1 })).toBeVisible({ timeout: answer });
  await page.getByRole("button", { name: consent }).click();
  await page.waitForURL((url) => url.origin === deployment.baseURL, { timeout: answer });
}

async function signedInAs(page: Page, account: OidcAccount, role: string): Promise<void> {
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible({ timeout: answer });
  await expect(page.locator(".who__name")).toHaveText(account.name);
  await expect(page.locator(".role-badge")).toHaveText(role);
}

/** A separate browser (its own cookies at Verity and at the provider), signed in with single sign-on. */
async function ssoSession(browser: Browser, account: OidcAccount, callbackUrl?: string) {
  const context = await browser.newContext({ baseURL: deployment.baseURL });
  const page = await context.newPage();
  await signInWithSso(page, account, callbackUrl);
  return { page, close: () => context.close() };
}

test.describe("single sign-on", () => {
  test("the sign-in page offers single sign-on beside the password form; an operator-group account lands as an operator", async ({
    page,
  }) => {
    const login = new LoginPage(page);
    await login.goto();
    await expect(login.username).toBeVisible();
    await expect(login.password).toBeVisible();
    await expect(login.submit).toBeVisible();
    await expect(page.getByRole("button", { name: "Sign in with single sign-on" })).toBeVisible();
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: test.info().outputPath("login-with-sso.png"), fullPage: true });

    await signInWithSso(page, oidcAccounts.operator, "/tasks");
    expect(new URL(page.url()).pathname).toBe("/tasks");
    await signedInAs(page, oidcAccounts.operator, "operator");
    // An operator has no People section.
    await expect(page.getByRole("link", { name: "People" })).toHaveCount(0);
    await page.goto("/admin/people");
    await expect(page.getByText("people:manage")).toBeVisible();
  });

  test("auditor- and admin-group accounts get those roles (the map's first match wins); the admin sees them linked under People", async ({
    page,
    browser,
  }) => {
    test.setTimeout(120_000);
    const auditor = await ssoSession(browser, oidcAccounts.auditor);
    await signedInAs(auditor.page, oidcAccounts.auditor, "auditor");
    await auditor.close();
    const operator = await ssoSession(browser, oidcAccounts.operator);
    await operator.close();

    // In verity-operators and verity-admins: admin, the first of the map.
    await signInWithSso(page, oidcAccounts.admin, "/admin/people");
    expect(new URL(page.url()).pathname).toBe("/admin/people");
    await signedInAs(page, oidcAccounts.admin, "admin");
    const people = new PeoplePage(page);
    await expect(people.heading).toBeVisible();
    for (const [account, role] of [
      [oidcAccounts.admin, "admin"],
      [oidcAccounts.auditor, "auditor"],
      [oidcAccounts.operator, "operator"],
    ] as const) {
      // Linked by the provider's subject, named by its preferred_username and name claims.
      const row = people.row(account.login);
      await expect(row).toContainText(account.name);
      await expect(row.getByRole("cell").nth(2)).toHaveText(role);
      await expect(row).toContainText("active");
    }
    await expect(people.row(oidcAccounts.admin.login)).toContainText("(you)");
  });

  test("an account whose groups map to no Verity role is refused, told why, and gets no account", async ({
    page,
    browser,
  }) => {
    test.setTimeout(120_000);
    await signInWithSso(page, oidcAccounts.unmapped, "/tasks");
    await page.waitForURL((url) => url.pathname === "/login");
    const login = new LoginPage(page);
    await expect(login.error).toContainText("none of your groups there maps to a Verity role");
    await expect(login.error).toContainText("Ask an administrator");
    // Not a wrong password: the password form is not marked as at fault.
    await expect(login.username).not.toHaveAttribute("aria-invalid");
    await expect(login.password).not.toHaveAttribute("aria-invalid");
    await expect(page.getByRole("button", { name: "Sign in with single sign-on" })).toBeVisible();
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: test.info().outputPath("sso-refused.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: test.info().outputPath("sso-refused-phone.png"), fullPage: true });
    // Not signed in: the console sends her back to sign in.
    await page.goto("/tasks");
    await page.waitForURL((url) => url.pathname === "/login");

    const admin = await ssoSession(browser, oidcAccounts.admin, "/admin/people");
    const people = new PeoplePage(admin.page);
    await expect(people.heading).toBeVisible();
    await expect(people.row(oidcAccounts.admin.login)).toBeVisible();
    await expect(people.row(oidcAccounts.unmapped.login)).toHaveCount(0);
    await admin.close();
  });

  test("a consent denied at the provider comes back to the sign-in page as a sign-on that did not complete", async ({
    page,
  }) => {
    await signInWithSso(page, oidcAccounts.operator, "/tasks", "Deny");
    await page.waitForURL((url) => url.pathname === "/login");
    await expect(new LoginPage(page).error).toContainText("Single sign-on did not complete");
    await page.goto("/tasks");
    await page.waitForURL((url) => url.pathname === "/login");
  });
});
