import { mkdirSync } from "node:fs";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask } from "../pages/agent-seed";
import { AccountPage } from "../pages/account-page";
import { seedStaleWriteAlert } from "../pages/alerts-page";
import { AuditSearchPage } from "../pages/audit-page";
import { axeViolations } from "../pages/axe";
import { addNoteWithReceipt, takeCheckpoint } from "../pages/checkpoints-page";
import { InstructionsPanel } from "../pages/instructions-page";
import { LoginPage, signIn } from "../pages/login-page";
import { ReviewDetailPage, ReviewQueuePage } from "../pages/reviews-page";
import { freezeRefund } from "../pages/reviews-seed";
import { captureServerAction, replayServerAction, type CapturedAction } from "../pages/server-action";

/**
 * Tenants through the console, in a real browser against the real server.
 * The demo's admin is the deployment's platform admin: at /platform/tenants
 * they open tenant B with its first admin (the project's own onboarding, the
 * only way in while the server holds its embedded database), who signs in
 * with the initial password and replaces it. Everything of tenant A (the
 * demo's `default`) is then refused to B's admin exactly as an id that does
 * not exist: pages, server actions, live-update routes, the audit export.
 */
const shots = "test-results/tenant-screenshots";
mkdirSync(shots, { recursive: true });
const agentAuth = { Authorization: `Bearer ${demoAgent.token}` };

test.describe.configure({ mode: "serial", timeout: 300_000 });
test.use({ viewport: { width: 1280, height: 800 } });

const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const tenantB = `e2e-b-${run}`;
const adminB = { username: `b-admin-${run}`, password: `b-admin's own password ${run}` };

/** Tenant A's things, seeded as agents and the reconciler make them (default tenant). */
interface TenantA {
  taskId: string;
  executionId: string;
  checkpointId: string;
  reviewId: string;
  alertId: string;
}
let a: TenantA;
let pageB: Page;

/** A made-up id as long as `id`, of the same characters: a missing thing that looks like the real one. */
function missingLike(id: string): string {
  const tail = "x".repeat(Math.min(6, id.length));
  return `${id.slice(0, id.length - tail.length)}${tail}`;
}

async function openAsDemo(browser: Browser, user: "admin" | "operator", path: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, user, path);
  return page;
}

/** The visible words of the page's main region, with `id` replaced: what a reader learns from it. */
async function mainWords(page: Page, id: string): Promise<string> {
  // The outer main: a not-found page renders its own inside the console's.
  const text = await page.locator("main").first().innerText();
  return text.split(id).join("<id>").split(encodeURIComponent(id)).join("<id>");
}

/** The words a server action answered (the form state's message), ids replaced. */
function answeredMessage(body: string, id: string): string {
  const found = /"message":"((?:[^"\\]|\\.)*)"/.exec(body);
  return (found?.[1] ?? `(no message in ${body.slice(0, 300)})`).split(id).join("<id>");
}

/** The captured action with one id swapped for another in its form body. */
function withId(action: CapturedAction, from: string, to: string): CapturedAction {
  return { ...action, body: Buffer.from(action.body.toString("utf8").split(from).join(to), "utf8") };
}

test.beforeAll(async ({ browser, request }) => {
  test.setTimeout(300_000);
  const running = await createRunningTask(request);
  const { task, executionId } = await addNoteWithReceipt(request, running);
  const checkpoint = await takeCheckpoint(request, task);
  const admin = await openAsDemo(browser, "admin", "/reviews");
  const { alertId } = await seedStaleWriteAlert(request, admin.request);
  const frozen = await freezeRefund(request, { amountCents: 4_321 });
  await new ReviewQueuePage(admin).goto();
  await new ReviewQueuePage(admin).open(frozen.task.id);
  const reviewId = new ReviewDetailPage(admin).reviewId();
  await admin.context().close();
  a = { taskId: task.id, executionId, checkpointId: checkpoint.id, reviewId, alertId };
});

test.afterAll(async () => {
  await pageB?.context().close();
});

test("the platform admin opens tenant B with its first admin; bad input is answered in words and changes nothing", async ({
  page,
}) => {
  await signIn(page, "admin", "/platform/tenants");
  await expect(page.getByTestId("header-tenant")).toHaveText(/default/);
  const nav = page.getByRole("navigation", { name: "Main" });
  // Under the header's Admin menu.
  await nav.getByRole("button", { name: "Admin" }).click();
  await nav.getByRole("link", { name: "Tenants" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Tenants" })).toBeVisible();
  const rows = page.getByTestId("tenants").locator("tbody tr");
  const before = await rows.count();
  expect.soft(await axeViolations(page), "axe on /platform/tenants").toEqual([]);

  const form = page.getByRole("form", { name: "Open a tenant" });
  const fill = async (id: string, name: string, username: string, displayName: string) => {
    await form.getByLabel("Tenant id").fill(id);
    await form.getByLabel("Name", { exact: true }).fill(name);
    await form.getByLabel("Admin username").fill(username);
    await form.getByLabel("Admin display name").fill(displayName);
    await form.getByRole("button", { name: "Open tenant" }).click();
  };
  await fill("Not An Id!", "Tenant B", adminB.username, "Bea Admin");
  await expect(form.getByRole("alert")).toContainText("Nothing was changed: A tenant id is 1–63 lowercase letters");
  await fill(tenantB, "Tenant B", "admin", "Bea Admin");
  await expect(form.getByRole("alert")).toContainText('Nothing was changed: username: "admin" is taken.');
  await fill("default", "Again", adminB.username, "Bea Admin");
  await expect(form.getByRole("alert")).toContainText("A tenant with the id default exists already");
  await page.reload();
  await expect(rows).toHaveCount(before);

  await fill(tenantB, "Tenant B", adminB.username, "Bea Admin");
  await expect(form.getByRole("status")).toContainText(`Tenant ${tenantB} (Tenant B) is open`);
  const initialPassword = await form.getByTestId("initial-password").innerText();
  const row = rows.filter({ has: page.locator(`code:text-is("${tenantB}")`) });
  await expect(row).toContainText("active");
  await page.screenshot({ path: `${shots}/tenants-1280.png`, fullPage: true });

  // The default tenant, the admin's own, cannot be suspended from here; a blank reason is answered in words.
  const ownRow = rows.filter({ has: page.locator('code:text-is("default")') });
  await expect(ownRow).toContainText("Your own tenant is suspended from the CLI only.");
  await row.getByRole("button", { name: "Suspend" }).click();
  await expect(row.getByRole("alert")).toContainText("Nothing was changed: Say why the tenant's status changes.");
  await expect(row.getByTestId("tenant-status")).toHaveText("active");

  // B's first admin: the initial password, then their own, then B's console.
  const context = await page
    .context()
    .browser()!
    .newContext({ viewport: { width: 1280, height: 800 } });
  pageB = await context.newPage();
  const login = new LoginPage(pageB);
  await login.goto("/tasks");
  await login.fill(adminB.username, initialPassword);
  await pageB.waitForURL((url) => url.pathname === "/account");
  await new AccountPage(pageB).replaceOneTimePassword(initialPassword, adminB.password);
  await pageB.goto("/tasks");
  await expect(pageB.getByTestId("header-tenant")).toHaveText(new RegExp(tenantB));
  // A tenant admin is not a platform admin: no link, and the page refuses in words.
  await pageB.getByRole("navigation", { name: "Main" }).getByRole("button", { name: "Admin" }).click();
  await expect(pageB.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "People" })).toBeVisible();
  await expect(pageB.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Tenants" })).toHaveCount(0);
  await pageB.goto("/platform/tenants");
  await expect(pageB.getByRole("main")).toContainText("Only a platform administrator may do this");
  await expect(pageB.getByTestId("tenants")).toHaveCount(0);
  // B's admin sees B's people only.
  await pageB.goto("/admin/people");
  await expect(pageB.getByTestId("people").locator("tbody tr")).toHaveCount(1);
  await expect(pageB.getByTestId("people")).toContainText(adminB.username);
});

test("tenant A's task, execution, review, checkpoint and alert pages answer B exactly as an id that does not exist", async () => {
  const pages: Array<[string, (id: string) => string]> = [
    [a.taskId, (id) => `/tasks/${encodeURIComponent(id)}`],
    [a.taskId, (id) => `/tasks/${encodeURIComponent(id)}/history`],
    [a.taskId, (id) => `/tasks/${encodeURIComponent(id)}/checkpoints`],
    [a.executionId, (id) => `/executions/${encodeURIComponent(id)}`],
    [a.reviewId, (id) => `/reviews/${encodeURIComponent(id)}`],
    [a.checkpointId, (id) => `/checkpoints/${encodeURIComponent(id)}`],
    [a.alertId, (id) => `/alerts/${encodeURIComponent(id)}`],
  ];
  for (const [id, path] of pages) {
    const missing = missingLike(id);
    const theirs = await pageB.goto(path(id));
    const theirsStatus = theirs?.status();
    const theirsWords = await mainWords(pageB, id);
    const theirsTitle = (await pageB.title()).split(id).join("<id>");
    const none = await pageB.goto(path(missing));
    expect.soft(theirsStatus, `${path("…")}: status`).toBe(none?.status());
    expect.soft(theirsStatus, `${path("…")}: status`).toBe(404);
    expect.soft(theirsWords, `${path("…")}: the words`).toBe(await mainWords(pageB, missing));
    expect.soft(theirsTitle, `${path("…")}: the title`).toBe((await pageB.title()).split(missing).join("<id>"));
  }
});

test("server actions posted by B with tenant A's ids change nothing and answer as for a missing id", async ({
  browser,
  request,
}) => {
  const admin = await openAsDemo(browser, "admin", `/reviews/${encodeURIComponent(a.reviewId)}`);
  try {
    // Approving A's review: captured from A's admin, posted with B's session.
    const review = new ReviewDetailPage(admin);
    await expect(review.status).toHaveText("OPEN");
    await review.reason.fill("tenant B must not be able to send this");
    const approve = await captureServerAction(admin, () => review.button("Approve & execute").click());
    const approvedByB = await (await replayServerAction(pageB.request, approve)).text();
    const approvedMissing = await (
      await replayServerAction(pageB.request, withId(approve, a.reviewId, missingLike(a.reviewId)))
    ).text();
    expect(answeredMessage(approvedByB, a.reviewId)).toMatch(/not found|no longer exists|does not exist/i);
    expect(answeredMessage(approvedByB, a.reviewId)).toBe(answeredMessage(approvedMissing, missingLike(a.reviewId)));
    await admin.reload();
    await expect(review.status).toHaveText("OPEN");
    await expect(review.approvals).toContainText("No decisions yet.");

    // An instruction on A's task.
    const ledger = async () => {
      const res = await request.get(`/api/v1/tasks/${encodeURIComponent(a.taskId)}/instructions`, {
        headers: agentAuth,
      });
      expect(res.ok()).toBe(true);
      return res.json();
    };
    const ledgerBefore = await ledger();
    await admin.goto(`/tasks/${encodeURIComponent(a.taskId)}`);
    const instructions = new InstructionsPanel(admin);
    await instructions.topic.fill("refund");
    await instructions.directive.selectOption("forbid");
    await instructions.text.fill("tenant B must not be able to add this");
    const instruct = await captureServerAction(admin, () => instructions.submit.click());
    const instructedByB = await (await replayServerAction(pageB.request, instruct)).text();
    const instructedMissing = await (
      await replayServerAction(pageB.request, withId(instruct, a.taskId, missingLike(a.taskId)))
    ).text();
    expect(answeredMessage(instructedByB, a.taskId)).toMatch(/not found|no longer exists|does not exist|no task/i);
    expect(answeredMessage(instructedByB, a.taskId)).toBe(answeredMessage(instructedMissing, missingLike(a.taskId)));
    expect(await ledger()).toEqual(ledgerBefore);
  } finally {
    await admin.context().close();
  }
});

test("B's live-update routes and B's audit verification and export never include tenant A's rows", async () => {
  const get = async (path: string) => {
    const res = await pageB.request.get(path);
    // When a verification ran is not an answer about anyone's rows.
    return { status: res.status(), text: (await res.text()).replace(/"checked_at":"[^"]*"/, '"checked_at":"<t>"') };
  };
  const aIds = Object.values(a);
  // The change tokens of B's lists: B has no task, review or alert, whatever A has.
  expect(JSON.parse((await get("/api/console/tasks/latest")).text)).toEqual({ token: "empty" });
  for (const path of ["/api/console/reviews/latest", "/api/console/alerts/latest", "/api/console/dashboard"]) {
    const answer = await get(path);
    expect(answer.status, path).toBe(200);
    for (const id of aIds) expect(answer.text, `${path} names ${id}`).not.toContain(id);
  }
  // Per-item polling routes: A's ids answer as missing ones.
  const itemRoutes: Array<[string, (id: string) => string]> = [
    [a.taskId, (id) => `/api/console/tasks/${encodeURIComponent(id)}/version`],
    [a.taskId, (id) => `/api/console/tasks/${encodeURIComponent(id)}/history`],
    [a.taskId, (id) => `/api/console/tasks/${encodeURIComponent(id)}/checkpoints`],
    [a.taskId, (id) => `/api/console/tasks/${encodeURIComponent(id)}/history/verify`],
    [a.reviewId, (id) => `/api/console/reviews/${encodeURIComponent(id)}/version`],
    [a.alertId, (id) => `/api/console/alerts/${encodeURIComponent(id)}/version`],
  ];
  for (const [id, path] of itemRoutes) {
    const theirs = await get(path(id));
    const missing = await get(path(missingLike(id)));
    expect.soft(theirs.status, path("…")).toBe(missing.status);
    expect.soft(theirs.text.split(id).join("<id>"), path("…")).toBe(missing.text.split(missingLike(id)).join("<id>"));
  }

  const audit = new AuditSearchPage(pageB);
  await audit.goto();
  await expect(pageB.getByRole("main")).toContainText(`This is the log of tenant ${tenantB}, and only of it.`);
  await audit.verifyButton.click();
  await expect(audit.verifyResult).toContainText(new RegExp(`Audit chain of tenant ${tenantB} verified — `));
  await expect(audit.verifyResult).toHaveAttribute("data-verified", "true");
  const exported = await audit.download("JSON Lines");
  expect(exported.name).toMatch(new RegExp(`^verity-audit-${tenantB}-.*\\.jsonl$`));
  const lines = exported.text.trim().split("\n");
  // B's own history is there (its opening, its admin, the sign-ins) and nothing of A's.
  expect(lines.length).toBeGreaterThan(2);
  expect(exported.text).toContain("tenant.created");
  expect(exported.text).toContain(adminB.username);
  for (const id of aIds) expect(exported.text, `the export names ${id}`).not.toContain(id);
  expect(exported.text).not.toContain("spiffe://verity.local/user/operator");
  expect(exported.text).not.toContain(demoAgent.identity);
});

test("a suspended tenant's admin is refused at once, served again when the platform admin reactivates it", async ({
  page,
}) => {
  await signIn(page, "admin", "/platform/tenants");
  const row = page
    .getByTestId("tenants")
    .locator("tbody tr")
    .filter({ has: page.locator(`code:text-is("${tenantB}")`) });
  await row.getByLabel(/Reason to suspend/).fill("e2e: contract paused");
  await row.getByRole("button", { name: "Suspend" }).click();
  await expect(row.getByTestId("tenant-status")).toContainText("suspended");
  await pageB.goto("/tasks");
  await expect(pageB.getByRole("main")).toContainText(`tenant (${tenantB}) is suspended`);
  await row.getByLabel(/Reason to reactivate/).fill("e2e: contract resumed");
  await row.getByRole("button", { name: "Reactivate" }).click();
  await expect(row.getByTestId("tenant-status")).toHaveText("active");
  await pageB.goto("/tasks");
  await expect(pageB.getByRole("heading", { level: 1 }).first()).toBeVisible();
  await expect(pageB.getByTestId("header-tenant")).toHaveText(new RegExp(tenantB));
});
