import { mkdirSync } from "node:fs";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { axeViolations } from "../pages/axe";
import { seedStaleWriteAlert } from "../pages/alerts-page";
import { InboxPage } from "../pages/inbox-page";
import { signIn, type DemoUser } from "../pages/login-page";
import { freezeRefund, type FrozenRefund } from "../pages/reviews-seed";
import { ReviewDetailPage } from "../pages/reviews-page";

/**
 * The inbox (docs/inbox.md): everything waiting on a person in one list,
 * from the demo data (the seeded escalation with no refund, the delivery
 * changes' human gates) and from real paths run here (a refund frozen by the
 * reconciler, a stale write the monitor alerts on); worked by keyboard
 * (j/k, Enter, c), claims seen by the other operator, filters and sort in
 * the URL, and the badge moved by one's own decision at once.
 */
const shots = "test-results/inbox";
mkdirSync(shots, { recursive: true });

const phone = { width: 390, height: 844 };
const wide = { width: 1440, height: 900 };

test.describe.configure({ timeout: 240_000 });

let frozen: FrozenRefund;
let alertId: string;

async function openAs(browser: Browser, user: DemoUser, path = "/inbox"): Promise<Page> {
  const page = await (await browser.newContext({ viewport: wide })).newPage();
  await signIn(page, user, path);
  return page;
}

test.beforeAll(async ({ browser, request }) => {
  test.setTimeout(180_000);
  frozen = await freezeRefund(request, { amountCents: 4_321 });
  const admin = await openAs(browser, "admin", "/dashboard");
  ({ alertId } = await seedStaleWriteAlert(request, admin.request));
  await admin.context().close();
});

test("an operator's inbox holds every kind of waiting item, reached from the dashboard, with its total on the badge", async ({
  browser,
}) => {
  const page = await openAs(browser, "operator", "/dashboard");
  try {
    // The landing page's next step.
    await expect(page.getByTestId("dashboard-inbox")).toContainText("wait on people");
    await page.getByTestId("dashboard-inbox").screenshot({ path: `${shots}/dashboard-inbox-1440.png` });
    await page.getByRole("link", { name: "Open your inbox" }).click();
    await page.waitForURL(/\/inbox$/);
    const inbox = new InboxPage(page);
    await expect(inbox.heading).toBeVisible();

    // A frozen refund, with the provider's verdict and its amount.
    const review = inbox.rowOfTask(frozen.task.id);
    await expect(review).toHaveAttribute("data-kind", "review");
    await expect(review).toContainText("Frozen payments.refund");
    await expect(review).toContainText("$43.21");
    await expect(review.getByTestId("provider-verdict")).toHaveText("Provider: not found");
    // The demo's escalation with no refund to decide: in no queue before the inbox.
    await expect(inbox.ofKind("escalated_task").filter({ hasText: "refund-order-1007" })).toHaveCount(1);
    await expect(inbox.ofKind("escalated_task").first()).toContainText("a person checks before any refund");
    // The demo's delivery changes wait for an operator's deployment approval and plan approval; not for security.
    await expect(inbox.ofKind("gate").filter({ hasText: "deployment_approved" }).first()).toBeVisible();
    await expect(inbox.ofKind("gate").filter({ hasText: "plan_approved" }).first()).toBeVisible();
    await expect(inbox.ofKind("gate").filter({ hasText: "security_approved" })).toHaveCount(0);
    // The monitor's alert.
    await expect(inbox.row(`alert:${alertId}`)).toContainText("A worker wrote with an outdated version");
    // Every row has its age as a relative time with the exact UTC time in its tooltip.
    await expect(review.locator("td.col-p2 time.relative-time")).toHaveAttribute("title", /UTC/);

    // The total is the list's length, and the navigation badge says the same (the demo may still be adding).
    await expect
      .poll(
        async () => {
          await page.reload();
          await inbox.navCount.waitFor();
          const total = await inbox.total.textContent();
          return total === String(await inbox.rows.count()) && total === (await inbox.navCount.textContent());
        },
        { timeout: 60_000, intervals: [1_000, 5_000] },
      )
      .toBe(true);
    await page.screenshot({ path: `${shots}/inbox-operator-1440.png`, fullPage: true });

    // The engineer's inbox: the security gates and the alerts, no frozen refund to decide.
    const engineer = await openAs(browser, "engineer");
    try {
      const theirs = new InboxPage(engineer);
      await expect(theirs.ofKind("gate").filter({ hasText: "security_approved" }).first()).toBeVisible();
      await expect(theirs.ofKind("gate").filter({ hasText: "deployment_approved" })).toHaveCount(0);
      await expect(theirs.ofKind("review")).toHaveCount(0);
      await expect(theirs.ofKind("escalated_task")).toHaveCount(0);
      await expect(theirs.row(`alert:${alertId}`)).toBeVisible();
    } finally {
      await engineer.context().close();
    }
    // An auditor decides nothing: no inbox in the navigation, and the page says why.
    const auditor = await openAs(browser, "auditor", "/dashboard");
    try {
      await expect(new InboxPage(auditor).navLink).toHaveCount(0);
      await expect(auditor.getByTestId("dashboard-inbox")).toHaveCount(0);
      // The badge's route refuses the same way, in words.
      const count = await auditor.request.get("/api/console/inbox/count");
      expect(count.status()).toBe(403);
      expect(await count.json()).toMatchObject({ detail: "Your role (auditor) does not include inbox:read." });
      await auditor.goto("/inbox");
      await expect(auditor.getByRole("heading", { level: 1, name: "You cannot open this page" })).toBeVisible();
    } finally {
      await auditor.context().close();
    }
  } finally {
    await page.context().close();
  }
});

test("filters and sort live in the URL with empty fields left out", async ({ browser }) => {
  const page = await openAs(browser, "operator");
  try {
    const inbox = new InboxPage(page);
    await inbox.filter("Kind", "Gate approval").click();
    await page.waitForURL(/\/inbox\?kind=gate$/);
    await expect(inbox.rows.first()).toBeVisible();
    expect(await inbox.rows.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")))).toEqual(
      Array.from({ length: await inbox.rows.count() }, () => "gate"),
    );
    await inbox.filter("Claimed", "Claimed by me").click();
    await page.waitForURL(/\/inbox\?kind=gate&claimed=mine$/);
    await inbox.filter("Kind", "All").click();
    await page.waitForURL(/\/inbox\?claimed=mine$/);
    await inbox.filter("Claimed", "Everyone").click();
    await page.waitForURL(/\/inbox$/);
    await inbox.filter("Sort", "Largest amount").click();
    await page.waitForURL(/\/inbox\?sort=amount$/);
    // The largest amount first: a review (the only kind with amounts), never a row without one before it.
    await expect(inbox.rows.first()).toHaveAttribute("data-kind", "review");
    // Something unknown in the URL reads as the whole inbox.
    await inbox.goto("?kind=nonsense&claimed=&sort=");
    await expect(inbox.filter("Kind", "All")).toHaveAttribute("aria-current", "page");
  } finally {
    await page.context().close();
  }
});

test("worked by keyboard: j and k move, c claims and releases, the other operator sees the claim in words, Enter opens", async ({
  browser,
}) => {
  const page = await openAs(browser, "operator");
  const other = await openAs(browser, "operator2");
  try {
    const inbox = new InboxPage(page);
    await expect(inbox.rows.nth(1)).toBeVisible();
    // j and k move the selection, and the focus with it (a screen reader reads the row's link).
    await page.locator("body").click({ position: { x: 5, y: 300 } });
    await page.keyboard.press("j");
    await expect(inbox.rows.nth(1)).toHaveClass(/inbox-row--selected/);
    await expect(inbox.rows.nth(1).locator("a.inbox-row__what")).toBeFocused();
    await page.keyboard.press("k");
    await expect(inbox.rows.nth(0)).toHaveClass(/inbox-row--selected/);
    await expect(inbox.rows.nth(0).locator("a.inbox-row__what")).toBeFocused();

    // Our frozen refund: selected by focusing its link, claimed with c.
    const row = inbox.rowOfTask(frozen.task.id);
    await row.locator("a.inbox-row__what").focus();
    await expect(row).toHaveClass(/inbox-row--selected/);
    await page.keyboard.press("c");
    await expect(row.getByTestId("claim-holder")).toContainText("You claimed it");
    await expect(row.getByRole("button", { name: /^Release/ })).toBeVisible();
    await page.screenshot({ path: `${shots}/inbox-claimed-1440.png`, fullPage: true });

    // The other operator sees who is on it, and cannot take it over.
    const theirs = new InboxPage(other).rowOfTask(frozen.task.id);
    await expect(theirs.getByTestId("claim-holder")).toContainText("Claimed by user/operator");
    await expect(theirs.getByRole("button", { name: /^(Claim|Release)/ })).toHaveCount(0);
    await other.goto("/inbox?claimed=unclaimed");
    await expect(new InboxPage(other).rowOfTask(frozen.task.id)).toHaveCount(0);
    await other.goto("/inbox?claimed=mine");
    await expect(new InboxPage(other).rowOfTask(frozen.task.id)).toHaveCount(0);

    // Claimed by me, then released with c again.
    await inbox.goto("?claimed=mine");
    await expect(inbox.rowOfTask(frozen.task.id)).toBeVisible();
    await inbox.goto();
    await inbox.rowOfTask(frozen.task.id).locator("a.inbox-row__what").focus();
    // Selected by the page's own script: hydrated, so the key below reaches its handler.
    await expect(inbox.rowOfTask(frozen.task.id)).toHaveClass(/inbox-row--selected/);
    await page.keyboard.press("c");
    await expect(inbox.rowOfTask(frozen.task.id).getByTestId("claim-holder")).toHaveCount(0);
    await expect(inbox.rowOfTask(frozen.task.id)).toContainText("Unclaimed");

    // Enter opens the selected item where it is decided.
    await inbox.rowOfTask(frozen.task.id).locator("a.inbox-row__what").focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/reviews\/[^/?]+$/);
    await expect(new ReviewDetailPage(page).title).toContainText("$43.21");
  } finally {
    await other.context().close();
    await page.context().close();
  }
});

test("one's own decision moves the inbox badge at once, not at the next poll", async ({ browser, request }) => {
  const own = await freezeRefund(request, { amountCents: 1_234 });
  const page = await openAs(browser, "operator");
  try {
    const inbox = new InboxPage(page);
    await expect(inbox.rowOfTask(own.task.id)).toBeVisible();
    await inbox.rowOfTask(own.task.id).locator("a.inbox-row__what").click();
    await page.waitForURL(/\/reviews\/[^/?]+$/);
    const review = new ReviewDetailPage(page);
    await inbox.navCount.waitFor();
    await review.decide("Reject", "customer withdrew the request");
    await expect(review.done).toContainText("Rejected");
    // The badge polls every 10 s; the decision asks for it at once. Compared with
    // the server's count as it is now, not with the count before minus one: the
    // other worker's specs freeze refunds into the same operator's inbox meanwhile.
    await expect
      .poll(
        async () => {
          const res = await page.request.get("/api/console/inbox/count");
          const { total } = (await res.json()) as { total: number };
          return Number(await inbox.navCount.textContent()) === total;
        },
        { timeout: 4_000, message: "the badge shows the server's count" },
      )
      .toBe(true);
  } finally {
    await page.context().close();
  }
});

test("fits a phone and a wide screen with no sideways scroll, and axe finds nothing", async ({ browser }) => {
  const page = await openAs(browser, "operator");
  try {
    const inbox = new InboxPage(page);
    for (const search of ["", "?kind=alert&claimed=unclaimed&sort=kind", "?claimed=mine&kind=escalated_task"]) {
      await inbox.goto(search);
      await expect(inbox.heading).toBeVisible();
      for (const viewport of [phone, wide]) {
        await page.setViewportSize(viewport);
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
        }));
        expect.soft(scrollWidth, `/inbox${search} at ${viewport.width} px`).toBeLessThanOrEqual(clientWidth);
        expect.soft(await axeViolations(page), `/inbox${search} at ${viewport.width} px`).toEqual([]);
        if (search === "")
          await page.screenshot({ path: `${shots}/inbox-operator-${viewport.width}.png`, fullPage: true });
      }
    }
  } finally {
    await page.context().close();
  }
});
