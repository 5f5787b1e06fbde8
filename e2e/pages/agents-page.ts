import { expect, type Locator, type Page } from "@playwright/test";

export interface ShownToken {
  secret: string;
  id: string;
}

/** /admin/agents: the create form, each agent's card, one token's controls and the token shown once. */
export class AgentsPage {
  readonly heading: Locator;
  readonly createForm: Locator;
  readonly list: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole("heading", { name: "Agents", level: 1 });
    this.createForm = page.getByRole("form", { name: "Create an agent" });
    this.list = page.getByTestId("agents");
  }

  async goto(): Promise<void> {
    await this.page.goto("/admin/agents");
  }

  /** Fills the create form; `submit` leaves the click to the caller (to capture the action, say). */
  async fillCreate(agent: {
    name: string;
    workflows: string[];
    tools: string[];
    takeOver?: boolean;
    /** The read_restricted scope. */
    readRestricted?: boolean;
    /** The registries it may publish to. */
    publish?: Array<"workflows" | "tools">;
    expiresIn?: string;
  }): Promise<void> {
    await this.createForm.getByLabel("Name").fill(agent.name);
    for (const w of agent.workflows) await this.createForm.getByLabel(w, { exact: true }).check();
    for (const t of agent.tools) await this.createForm.getByLabel(t, { exact: true }).check();
    if (agent.takeOver) await this.createForm.getByLabel("May take over another agent's live lease").check();
    if (agent.readRestricted) await this.createForm.getByLabel("May read restricted fields unmasked").check();
    if (agent.publish?.includes("workflows"))
      await this.createForm.getByLabel("May publish workflow definitions").check();
    if (agent.publish?.includes("tools")) await this.createForm.getByLabel("May register tools").check();
    if (agent.expiresIn)
      await this.createForm.getByLabel("Token expires after").selectOption({ label: agent.expiresIn });
  }

  async submitCreate(): Promise<void> {
    await this.createForm.getByRole("button", { name: "Create agent" }).click();
  }

  /** Creates an agent and returns the token the page shows once. */
  async create(agent: Parameters<AgentsPage["fillCreate"]>[0]): Promise<ShownToken> {
    await this.fillCreate(agent);
    await this.submitCreate();
    return this.shownToken(this.createForm);
  }

  /** The token shown once inside `scope` (the create form, or a token's controls after a rotation). */
  async shownToken(scope: Locator): Promise<ShownToken> {
    const box = scope.locator(".token-once");
    await box.waitFor({ timeout: 30_000 });
    return {
      secret: await box.getByTestId("token-secret").inputValue(),
      id: (await box.getAttribute("data-token-id"))!,
    };
  }

  /** Clicks the copy button beside the token shown in `scope` and reads what reached the clipboard. */
  async copyShownToken(scope: Locator): Promise<string> {
    await scope.locator(".token-once").getByRole("button", { name: "Copy" }).click();
    await expect(scope.locator(".token-once").getByRole("button", { name: "Copied" })).toBeVisible();
    return this.page.evaluate(() => navigator.clipboard.readText());
  }

  agent(name: string): Locator {
    return this.list.getByRole("article", { name, exact: true });
  }

  token(id: string): Locator {
    return this.list.locator(`li[data-token-id="${id}"]`);
  }

  /** Rotates a token with the overlap named by its label; returns the new token, shown once under the old one. */
  async rotate(tokenId: string, overlap: string): Promise<ShownToken> {
    const rotate = this.token(tokenId).getByRole("form", { name: /^Rotate token/ });
    // A token rotated before still shows the token that rotation made: wait for another one.
    const earlier = this.token(tokenId).locator(".token-once");
    const before = (await earlier.count()) > 0 ? await earlier.getAttribute("data-token-id") : null;
    await rotate.getByLabel("Old token keeps working for").selectOption({ label: overlap });
    await rotate.getByRole("button", { name: "Rotate" }).click();
    if (before) await expect(earlier).not.toHaveAttribute("data-token-id", before, { timeout: 30_000 });
    return this.shownToken(this.token(tokenId));
  }

  /** Opens the revoke confirmation; `confirmRevoke` completes it. */
  async startRevoke(tokenId: string): Promise<Locator> {
    await this.token(tokenId).getByRole("button", { name: "Revoke…" }).click();
    const confirm = this.token(tokenId).getByRole("form", { name: /^Revoke token/ });
    await expect(confirm).toBeVisible();
    return confirm;
  }

  async revoke(tokenId: string): Promise<void> {
    const confirm = await this.startRevoke(tokenId);
    await confirm.getByRole("button", { name: "Revoke token" }).click();
    await expect(this.token(tokenId).getByRole("status")).toContainText("is revoked", { timeout: 30_000 });
  }
}
