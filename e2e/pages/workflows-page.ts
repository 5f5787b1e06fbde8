import { expect, type Locator, type Page } from "@playwright/test";
import { axeViolations } from "./axe";

/** The workflows section: the registry, a version, a comparison, a migration. */
export class WorkflowsPage {
  constructor(readonly page: Page) {}

  /** A workflow's entry on /workflows, by the start of its heading ("Delivery", or "Delivery delivery"). */
  entry(heading: string): Locator {
    return this.page.getByRole("region", { name: new RegExp(`^${heading}\\b`) });
  }

  versions(name: string): Locator {
    return this.page.getByRole("list", { name: `Versions of ${name}, newest first` });
  }

  states(label: string): Locator {
    return this.page.getByRole("list", { name: `States of ${label}` });
  }

  /** A state's item in a version's list, found by its heading. */
  state(name: string): Locator {
    return this.page.locator(".wf-state").filter({ has: this.page.getByRole("heading", { name, exact: false }) });
  }

  /** A gate's item in a version's list of gates, by its name (other gates' rules may mention it). */
  gate(label: string, gate: string): Locator {
    return this.page
      .getByRole("list", { name: `Gates of ${label}` })
      .getByRole("listitem")
      .filter({ has: this.page.getByText(gate, { exact: true }) });
  }

  edge(from: string, to: string): Locator {
    return this.page.locator(`.wf-edge[data-from="${from}"][data-to="${to}"]`);
  }

  /** Neither wider than the viewport nor with any axe violation, at a phone's and a wide screen's width. */
  async checkAtBothWidths(screenshot: string, ready: () => Promise<void>): Promise<void> {
    for (const width of [390, 1440]) {
      await this.page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await ready();
      expect(
        await this.page.evaluate(() => document.documentElement.scrollWidth),
        `page width at ${width}`,
      ).toBeLessThanOrEqual(width);
      expect(await axeViolations(this.page), `axe at ${width}`).toEqual([]);
      await this.page.screenshot({
        path: `test-results/console-screenshots/${screenshot}-${width}.png`,
        fullPage: true,
      });
    }
  }
}
