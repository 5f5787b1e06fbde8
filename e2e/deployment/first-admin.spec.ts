/**
 * Issue 11, "First start of a real deployment", in the browser: the second
 * server of playwright.config.ts starts on an empty database with
 * VERITY_DEMO_DATA=false and prints a one-time /setup link
 * (scripts/start.ts), read here from its output as an operator reads it
 * from the terminal. The link creates the first admin, who signs in and
 * sees the console; the link is then used up, even in a page opened before;
 * the demo logins do not exist there.
 */
import { readFileSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { axeViolations } from "../pages/axe";
import { LoginPage } from "../pages/login-page";
import { PeoplePage } from "../pages/people-page";
import { deployment } from "./servers";

const answer = 30_000;

/** The link from the server's output: `  http://localhost:<port>/setup?token=vst_…`. */
function setupLinkFromServerOutput(): string {
  const output = readFileSync(deployment.log, "utf8");
  const links = [...output.matchAll(/^\s*(http:\/\/\S+\/setup\?token=\S+)\s*$/gm)].map((m) => m[1]!);
  expect(output, "the server prints the link before it serves").toContain("no accounts yet");
  expect(links, "one link, printed once").toHaveLength(1);
  return links[0]!;
}

async function fillSetup(page: Page, username: string, displayName: string, password: string, confirm = password) {
  const form = page.getByRole("form", { name: "Create the first admin" });
  await form.getByLabel("Username").fill(username);
  await form.getByLabel("Display name").fill(displayName);
  await form.getByLabel("Password (at least 12 characters)").fill(password);
  await form.getByLabel("Password again").fill(confirm);
  await form.getByRole("button", { name: "Create the admin" }).click();
}

test("the one-time setup link creates the first admin, who signs in; the link then works no more, and demo logins do not exist", async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000);
  const link = setupLinkFromServerOutput();
  expect(new URL(link).origin).toBe(deployment.baseURL);

  // No demo accounts on a real deployment: none offered, none accepted.
  const login = new LoginPage(page);
  await login.goto();
  await expect(page.getByText("Demo accounts")).toHaveCount(0);
  await login.fill("admin", "admin-demo");
  await expect(login.error).toContainText("do not match", { timeout: answer });
  await expect(login.username).toHaveAttribute("aria-invalid", "true");

  // A second tab holds the form open, to submit it after the link is used.
  const otherContext = await browser.newContext();
  const other = await otherContext.newPage();
  await other.goto(link);
  await expect(other.getByRole("form", { name: "Create the first admin" })).toBeVisible();

  await page.goto(link);
  await expect(page.getByRole("heading", { name: "Set up Verity", level: 1 })).toBeVisible();
  // Bad input says why and creates nothing: the link still works afterwards.
  await fillSetup(page, "rosa", "Rosa Admin", "rosa's long passphrase", "rosa's other passphrase");
  await expect(page.getByText("The two passwords differ")).toBeVisible({ timeout: answer });
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: test.info().outputPath("setup-form.png"), fullPage: true });
  await fillSetup(page, "rosa", "Rosa Admin", "rosa's long passphrase");
  const done = page.getByRole("status").filter({ hasText: "first admin" });
  await expect(done).toContainText("Rosa Admin (rosa) is this deployment's first admin.", { timeout: answer });

  await done.getByRole("link", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/login");
  await login.fill("rosa", "rosa's long passphrase");
  await page.waitForURL((url) => url.pathname === "/admin/people", { timeout: answer });
  await expect(page.getByRole("button", { name: "Sign out" })).toBeVisible();
  await expect(page.locator(".role-badge")).toHaveText("admin");
  const people = new PeoplePage(page);
  await expect(people.heading).toBeVisible();
  await expect(people.row("rosa")).toContainText("admin");
  await expect(people.row("rosa")).toContainText("(you)");
  await page.screenshot({ path: test.info().outputPath("first-admin-people.png"), fullPage: true });

  // Used up: the page opened before the admin existed is refused on submit…
  await fillSetup(other, "mallory", "Mallory", "mallory's long passphrase");
  await expect(other.getByRole("alert").filter({ hasText: "accounts already" })).toBeVisible({ timeout: answer });
  // …and the link itself no longer opens the form.
  await other.goto(link);
  await expect(other.getByRole("alert").filter({ hasText: "This setup link does not work" })).toBeVisible();
  await expect(other.getByRole("form", { name: "Create the first admin" })).toHaveCount(0);
  await other.setViewportSize({ width: 390, height: 844 });
  expect(await axeViolations(other)).toEqual([]);
  await other.screenshot({ path: test.info().outputPath("setup-link-used-phone.png"), fullPage: true });
  await otherContext.close();

  await people.goto();
  await expect(people.row("mallory")).toHaveCount(0);
});
