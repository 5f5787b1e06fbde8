import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";
import type { AxeResults, RunOptions } from "axe-core";

/**
 * axe-core run inside the page. The script is evaluated through the
 * DevTools protocol, which the console's nonce-based CSP does not govern
 * (a <script> tag added by the test would be refused, as it should be).
 */
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Every WCAG 2.x A/AA violation on the page as it is now, in words a failure message can show. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // A page the live stream is refreshing can be caught between React's removal of the old
  // <title> and the insertion of the new one (seen once after a server action): judge the page
  // once it has a title again. A page that never gets one still fails, here.
  await page.waitForFunction(() => document.title.trim() !== "", undefined, { timeout: 10_000 });
  // Once per document: the script is half a megabyte to parse, and a page checked at two widths keeps it.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    // The script above defines window.axe; its API is axe-core's own.
    const axe = (window as unknown as { axe: { run: (context: Document, options: RunOptions) => Promise<AxeResults> } })
      .axe;
    const results = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
      // Every rule still runs and every violating node is reported; axe only stops collecting
      // each passing and inapplicable node, which on the audit page was a third of its time.
      resultTypes: ["violations"],
    });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      targets: v.nodes.map((n) => n.target.map(String).join(" ")),
    }));
  });
}
