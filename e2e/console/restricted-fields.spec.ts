import { expect, test, type Page } from "@playwright/test";
import { expectPageFits, wide } from "../pages/look";
import { signIn } from "../pages/login-page";

/**
 * Data classes in the console: a refund's customer is restricted
 * (lib/model/tools/built-in-tools.ts). On the same execution page of the
 * demo data an operator, who decides refunds, reads the customer; an
 * auditor, who has no clearance, reads "[restricted]" where it was, is told
 * why in words, and the customer is nowhere in the page the server sent.
 */
test.use({ viewport: wide });
test.describe.configure({ timeout: 180_000 });

const customerIn = (text: string) => /"customer_id":\s*"([^"]+)"/.exec(text)?.[1];

async function openFirstRefund(page: Page): Promise<string> {
  await page.goto("/executions?tool=payments.refund");
  const link = page.getByRole("main").locator('table tbody tr th a[href^="/executions/"]').first();
  const href = await link.getAttribute("href");
  expect(href).not.toBeNull();
  await page.goto(href!);
  await expect(page.getByRole("heading", { level: 3, name: "Request" })).toBeVisible({ timeout: 30_000 });
  return href!;
}

test("an operator reads a refund's customer where an auditor reads [restricted], on the same execution page", async ({
  browser,
}) => {
  const operator = await browser.newPage();
  await signIn(operator, "operator", "/executions");
  const href = await openFirstRefund(operator);
  const customer = customerIn(await operator.getByRole("main").innerText());
  expect(customer).toBeDefined();
  expect(customer).not.toBe("[restricted]");
  await expect(operator.getByTestId("masked-fields")).toHaveCount(0);

  const auditor = await browser.newPage();
  await signIn(auditor, "auditor", "/executions");
  await auditor.goto(href);
  const main = auditor.getByRole("main");
  await expect(main.getByRole("heading", { level: 3, name: "Request" })).toBeVisible({ timeout: 30_000 });
  expect(customerIn(await main.innerText())).toBe("[restricted]");
  await expect(auditor.getByTestId("masked-fields")).toContainText("/request/customer_id");
  await expect(auditor.getByTestId("masked-fields")).toContainText("no clearance");
  // Masked on the server: the value is not in the HTML (nor the RSC payload) the browser received.
  expect(await auditor.content()).not.toContain(customer!);
  await expectPageFits(auditor, "execution-restricted");
  await operator.close();
  await auditor.close();
});
