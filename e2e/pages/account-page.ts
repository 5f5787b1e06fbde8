import { expect, type Locator, type Page } from "@playwright/test";

/** /account: the change-password form, and the notice a one-time password brings. */
export class AccountPage {
  readonly heading: Locator;
  readonly form: Locator;
  readonly mustChange: Locator;
  readonly changed: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { name: "Your account", level: 1 });
    this.form = page.getByRole("form", { name: "Change your password" });
    this.mustChange = page.getByTestId("password-must-change");
    this.changed = page.getByTestId("password-changed");
  }

  async goto(): Promise<void> {
    await this.page.goto("/account");
  }

  /** Fills and submits the form; the current password's label says "One-time" while one must be replaced. */
  async submit(current: string, next: string, again = next): Promise<void> {
    await this.form.getByLabel(/^(Current|One-time) password$/).fill(current);
    await this.form.getByLabel("New password", { exact: true }).fill(next);
    await this.form.getByLabel("New password again").fill(again);
    await this.form.getByRole("button", { name: "Change password" }).click();
  }

  /** The words under a field, found through the field's aria-describedby. */
  fieldError(label: string | RegExp): Locator {
    return this.form
      .locator(".field")
      .filter({ has: this.page.getByLabel(label) })
      .locator(".field-error");
  }

  /** Replaces the one-time password the person was just sent here with, and waits for the answer. */
  async replaceOneTimePassword(oneTime: string, next: string): Promise<void> {
    await expect(this.mustChange).toBeVisible();
    await this.submit(oneTime, next);
    await expect(this.changed).toBeVisible({ timeout: 30_000 });
  }
}
