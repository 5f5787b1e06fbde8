import { expect, type APIRequestContext, type Locator, type Page, type PlaywrightWorkerArgs } from "@playwright/test";

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
}

/**
 * Signs `user` in over next-auth's own endpoints, as the form's script does
 * (csrf token, then the credentials callback), and checks the session it
 * made. On a browser context's `request` the session cookie lands in that
 * browser. The form itself is what auth.spec.ts and the sign-in specs test;
 * everything else skips rendering /login to get a session.
 */
export async function signInOver(request: APIRequestContext, user: DemoUser): Promise<void> {
  const { csrfToken } = (await (await request.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await request.post("/api/auth/callback/credentials", {
    form: { csrfToken, username: user, password: demoPasswords[user], json: "true" },
  });
  expect(res.status(), await res.text()).toBeLessThan(400);
  const session = (await (await request.get("/api/auth/session")).json()) as { userId?: string };
  expect(session.userId, `signed in as ${user}`).toBeTruthy();
}

/** A request context of its own, signed in as `user` (API specs acting as a person). */
export async function signedInRequest(
  playwright: PlaywrightWorkerArgs["playwright"],
  baseURL: string | undefined,
  user: DemoUser,
): Promise<APIRequestContext> {
  const context = await playwright.request.newContext({ baseURL, extraHTTPHeaders: {} });
  await signInOver(context, user);
  return context;
}

/** Signs the page's browser in as `user` and opens `callbackUrl` (the console, not the sign-in page). */
export async function signIn(page: Page, user: DemoUser, callbackUrl = "/tasks"): Promise<void> {
  await signInOver(page.request, user);
  await page.goto(callbackUrl);
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
}
