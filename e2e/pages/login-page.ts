import { expect, type Locator, type Page } from "@playwright/test";

export const demoPasswords = {
  operator: "operator-demo",
  operator2: "operator2-demo",
  auditor: "auditor-demo",
  engineer: "engineer-demo",
  admin: "admin-demo",
} as const;
export type DemoUser = keyof typeof demoPasswords;

export class LoginPage {
  readonly username: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.username = page.getByLabel("Username");
    this.password = page.getByLabel("Password");
    // Exact: where single sign-on is on, "Sign in with single sign-on" is a button too.
    this.submit = page.getByRole("button", { name: "Sign in", exact: true });
    this.error = page.locator("#login-error");
  }

  async goto(callbackUrl?: string): Promise<void> {
    await this.page.goto(callbackUrl ? `/login?callbackUrl=${encodeURIComponent(callbackUrl)}` : "/login");
  }

  async fill(username: string, password: string): Promise<void> {
    await this.username.fill(username);
    await this.password.fill(password);
    await this.submit.click();
  }

  /** Signs in and waits until the console (not the sign-in page) is showing. */
  async signInAs(user: DemoUser, callbackUrl = "/tasks"): Promise<void> {
    await this.goto(callbackUrl);
    await this.fill(user, demoPasswords[user]);
    await this.page.waitForURL((url) => url.pathname !== "/login");
    await expect(this.page.getByRole("button", { name: "Sign out" })).toBeVisible();
  }
}

export async function signIn(page: Page, user: DemoUser, callbackUrl?: string): Promise<void> {
  await new LoginPage(page).signInAs(user, callbackUrl);
}
