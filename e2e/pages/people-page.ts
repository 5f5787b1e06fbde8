import type { Locator, Page } from "@playwright/test";

/** /admin/people: the create form, the list, and one person's controls. */
export class PeoplePage {
  readonly heading: Locator;
  readonly createForm: Locator;
  readonly list: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { name: "People", level: 1 });
    this.createForm = page.getByRole("form", { name: "Create a person" });
    this.list = page.getByTestId("people");
  }

  async goto(): Promise<void> {
    await this.page.goto("/admin/people");
  }

  /** Creates a person and returns the initial password the page shows once. */
  async create(username: string, displayName: string, role: string): Promise<string> {
    await this.createForm.getByLabel("Username").fill(username);
    await this.createForm.getByLabel("Display name").fill(displayName);
    await this.createForm.getByLabel("Role").selectOption(role);
    await this.createForm.getByRole("button", { name: "Create person" }).click();
    const password = this.createForm.getByTestId("initial-password");
    await password.waitFor({ timeout: 30_000 });
    return (await password.textContent())!.trim();
  }

  row(username: string): Locator {
    return this.list.locator(`tr[data-username="${username}"]`);
  }
}
