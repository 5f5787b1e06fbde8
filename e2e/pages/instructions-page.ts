import type { Locator, Page } from "@playwright/test";

/** The Instructions panel of a task page (components/instructions/instructions-panel.tsx). */
export class InstructionsPanel {
  readonly region: Locator;
  readonly current: Locator;
  readonly entries: Locator;
  readonly form: Locator;
  readonly topic: Locator;
  readonly directive: Locator;
  readonly text: Locator;
  readonly submit: Locator;
  readonly conflict: Locator;
  readonly done: Locator;

  constructor(readonly page: Page) {
    this.region = page.getByRole("region", { name: "Instructions" });
    this.current = this.region.getByRole("list", { name: "Current instruction per topic" }).locator("li");
    this.entries = this.region.getByRole("list", { name: "Instruction ledger, newest first" }).locator("li");
    this.form = this.region.getByRole("form", { name: "Add an instruction" });
    this.topic = this.form.getByLabel("Topic");
    this.directive = this.form.getByLabel("Directive");
    this.text = this.form.getByLabel("Instruction (required)");
    this.submit = this.form.getByRole("button", { name: "Add instruction" });
    this.conflict = this.form.locator(".notice--warning");
    this.done = this.form.locator(".notice--success");
  }

  entry(seq: number): Locator {
    return this.region.locator(`li[data-seq="${seq}"]`);
  }

  async add(directive: "allow" | "forbid" | "note", text: string, topic = "refund"): Promise<void> {
    await this.topic.fill(topic);
    await this.directive.selectOption(directive);
    await this.text.fill(text);
    await this.submit.click();
  }
}
