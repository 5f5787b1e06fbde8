import { mkdirSync } from "node:fs";
import { expect, type Locator, type Page } from "@playwright/test";
import { axeViolations } from "./axe";

/** The two widths the issue measures every page at: a phone and a wide screen. */
const phone = { width: 390, height: 844 };
export const wide = { width: 1440, height: 900 };

/** Where the pictures of the pages a spec looks at go, for a person to open. */
const shots = "test-results/console-look";
mkdirSync(shots, { recursive: true });

/** How far the page sticks out to the right of the window (0 when it never scrolls sideways). */
async function pageOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/**
 * The page as it is now, at a phone's width and a wide screen's: it never
 * scrolls sideways, axe finds nothing, and a full-page picture is kept under
 * `name` (with the colour scheme when it is dark).
 */
export async function expectPageFits(page: Page, name: string): Promise<void> {
  const scheme = await page.evaluate(() => (matchMedia("(prefers-color-scheme: dark)").matches ? "-dark" : ""));
  for (const viewport of [phone, wide]) {
    await page.setViewportSize(viewport);
    const where = `${name} at ${viewport.width} px${scheme}`;
    expect.soft(await pageOverflow(page), `${where}: sideways overflow`).toBe(0);
    expect.soft(await axeViolations(page), `${where}: axe`).toEqual([]);
    await page.screenshot({ path: `${shots}/${name}-${viewport.width}${scheme}.png`, fullPage: true });
  }
}

/**
 * Clicks a CopyButton and reads what reached the clipboard (the context must
 * grant clipboard-read and clipboard-write). A click that lands before the
 * page's script has hydrated does nothing, as it would for a person, who
 * clicks again: so does this, until the button's live region says "Copied".
 */
export async function copyWith(button: Locator): Promise<string> {
  const status = button.locator("xpath=following-sibling::*[@role='status']");
  await expect(async () => {
    await button.click();
    await expect(status).toHaveText("Copied", { timeout: 1_000 });
  }).toPass({ timeout: 15_000 });
  return button.page().evaluate(() => navigator.clipboard.readText());
}
