import { expect, test, type Browser, type Page } from "@playwright/test";
import { verifyAuditExport } from "@/lib/use-cases/audit/audit-export";
import { LONG_HISTORY_TASK_ID } from "@/programs/demo/long-history";
import { LONG_HISTORY_EVENTS } from "../pages/long-history";
import { demoObserver } from "@/lib/config/demo-accounts";
import { createRunningTask, transition } from "../pages/agent-seed";
import { addNoteWithReceipt } from "../pages/checkpoints-page";
import { AuditSearchPage, idempotencyKeyOf, TaskHistoryPage } from "../pages/audit-page";
import { signIn, type DemoUser } from "../pages/login-page";

/**
 * The auditors' console end to end: tasks and side effects made through the
 * agent API, then read back by people in the browser: a task's merged
 * history (filtered, verified), the search across tasks, the chain
 * verification, an export checked line by line, and the long-history task
 * that playwright.config.ts has the server seed (VERITY_E2E_LONG_HISTORY).
 */
const shots = "test-results/audit-screenshots";
test.use({ viewport: { width: 1280, height: 900 } });
// Each test seeds tasks and side effects through the API first; on a loaded machine that alone takes a while.
test.describe.configure({ timeout: 180_000 });

async function openAs(
  browser: Browser,
  user: DemoUser,
  path: string,
): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  await signIn(page, user, path);
  return { page, close: () => context.close() };
}

test("an auditor opens a task's history from the task page, sees it verified, and filters the timeline", async ({
  browser,
  request,
}) => {
  const running = await createRunningTask(request);
  const noted = await addNoteWithReceipt(request, running);
  await transition(request, noted.task, {
    patch: { budget: { tokens_spent: 900, hops_used: 3 } },
    reason: "spend reported",
  });

  const { page, close } = await openAs(browser, "auditor", `/tasks/${running.id}`);
  await page.getByRole("link", { name: /^History: every event of this task/ }).click();
  const history = new TaskHistoryPage(page);
  await expect(history.heading).toContainText(running.id);
  await expect(history.badge).toContainText("Verified —");
  await expect(history.badge).toHaveAttribute("data-verified", "true");
  // Newest first: the spend report, then the note's success; the creation last.
  await expect(history.rows.first()).toContainText("Updated in place in RUNNING");
  await expect(history.rows.first()).toContainText("“spend reported”");
  await expect(history.rows.filter({ hasText: "crm.add_note succeeded, with evidence" })).toHaveCount(1);
  await expect(history.rows.last()).toContainText("Task created in RECEIVED");
  await expect(history.status).toContainText("newest first · all loaded");
  await page.screenshot({ path: `${shots}/history.png`, fullPage: true });

  // Only the executions, oldest first.
  await history.filters().getByLabel("Executions").check();
  await history.filters().getByLabel("Order").selectOption("asc");
  await history.apply();
  await expect(page).toHaveURL(/kind=execution/);
  await expect(history.rows).toHaveCount(3);
  await expect(history.rows.nth(0)).toContainText("crm.add_note intent recorded");
  await expect(history.rows.nth(1)).toContainText("crm.add_note sent to the provider");
  await expect(history.rows.nth(2)).toContainText("crm.add_note succeeded, with evidence");
  await expect(history.rows.nth(2)).toContainText("SENT → SUCCEEDED");
  // An actor who never touched the task: nothing, said so.
  await history.filters().getByLabel("Actor (id, short form or part)").fill("spiffe://verity.local/user/nobody");
  await history.apply();
  await expect(page.getByRole("status").filter({ hasText: "No events match these filters." })).toBeVisible();
  // A window that ends before it starts: refused in words.
  await history.goto(running.id, "from=2026-11-30T12:00&to=2026-11-30T11:00");
  await expect(
    page.getByRole("alert").filter({ hasText: "The history cannot be shown with these filters" }),
  ).toContainText("To: must be later than From");
  await close();
});

test("an auditor searches across tasks by idempotency key, verifies every chain and exports the selection; the file verifies", async ({
  browser,
  request,
}) => {
  const running = await createRunningTask(request);
  const noted = await addNoteWithReceipt(request, running, "note-audit");
  const key = await idempotencyKeyOf(request, noted.executionId);

  const { page, close } = await openAs(browser, "auditor", "/audit");
  const audit = new AuditSearchPage(page);
  await expect(audit.heading).toBeVisible();
  await audit.filter("Idempotency key").fill(key);
  await audit.filter("Order").selectOption("asc");
  await audit.search();
  await expect(audit.results).toHaveCount(3);
  await expect(audit.results.nth(0)).toContainText("crm.add_note intent recorded");
  await expect(audit.results.nth(2)).toContainText("crm.add_note succeeded, with evidence");
  await expect(page.getByText("1 matching execution")).toBeVisible();
  await expect(audit.results.first().getByRole("link", { name: running.id })).toHaveAttribute(
    "href",
    `/tasks/${running.id}`,
  );
  // Widened to the whole task: its creation is in the results too.
  await audit.filter("Tool, key or execution: show").selectOption("task");
  await audit.search();
  await expect(audit.results.filter({ hasText: "Task created in RECEIVED" })).toHaveCount(1);
  await audit.filter("Tool, key or execution: show").selectOption("execution");
  await audit.search();
  await expect(audit.results).toHaveCount(3);

  await audit.verifyButton.click();
  await expect(audit.verifyResult).toContainText(
    /Audit chain of tenant default verified — [\d,]+ streams, [\d,]+ entries/,
  );
  await expect(audit.verifyResult).toHaveAttribute("data-verified", "true");
  await page.screenshot({ path: `${shots}/search.png`, fullPage: true });

  const jsonl = await audit.download("JSON Lines");
  expect(jsonl.name).toMatch(/^verity-audit-default-.*\.jsonl$/);
  const lines = jsonl.text
    .trim()
    .split("\n")
    .map(
      (l) =>
        JSON.parse(l) as {
          stream: string;
          idempotency_key?: string;
          details: { idempotency_key?: string };
          hash: string;
        },
    );
  expect(lines).toHaveLength(3);
  for (const line of lines) {
    expect(line.stream).toBe(`execution:${noted.executionId}`);
    expect(line.details.idempotency_key).toBe(key);
    expect(line.hash).toMatch(/^[0-9a-f]{64}$/);
  }
  expect(verifyAuditExport(jsonl.text)).toMatchObject({ ok: true, records: 3, links: 2, problems: [] });
  // The server checks it the same way.
  const checked = await page.request.post("/api/v1/audit/verify", {
    headers: { "Content-Type": "application/x-ndjson" },
    data: jsonl.text,
  });
  expect(await checked.json()).toMatchObject({ ok: true, records: 3 });
  const csv = await audit.download("CSV");
  expect(csv.name).toMatch(/\.csv$/);
  expect(csv.text.split("\n")[0]).toBe(
    "stream,seq,id,at,actor,actor_kind,action,subject_type,subject_id,task_id,details,prev_hash,hash",
  );
  expect(verifyAuditExport(csv.text, { format: "csv" })).toMatchObject({ ok: true, records: 3 });
  // Taking the copy out is itself on record, with the filter.
  await audit.goto(`action=audit.exported&actor=${encodeURIComponent("spiffe://verity.local/user/auditor")}`);
  await expect(audit.results.first()).toContainText("Audit log exported as csv");
  await close();
});

test("bad filters are refused in words on /audit", async ({ browser }) => {
  const { page, close } = await openAs(browser, "auditor", "/audit?from=yesterday&status=not%20a%20status&kind=gossip");
  const audit = new AuditSearchPage(page);
  await expect(audit.errors).toContainText("From: must be a date and time");
  await expect(audit.errors).toContainText("Status: must be a status name");
  await expect(audit.errors).toContainText("Kind of event: unknown kind of event");
  await expect(audit.results).toHaveCount(0);
  await close();
});

test("an engineer searches and verifies but is told why there is no export; an operator is told why /audit is closed and reads a task's history", async ({
  browser,
}) => {
  const engineer = await openAs(browser, "engineer", "/audit");
  const audit = new AuditSearchPage(engineer.page);
  await expect(audit.heading).toBeVisible();
  await expect(audit.exportSection).toContainText("Your role (engineer) cannot export the log");
  await expect(audit.exportSection.getByRole("button")).toHaveCount(0);
  await engineer.close();

  const operator = await openAs(browser, "operator", "/audit");
  await expect(operator.page.getByRole("heading", { name: "You cannot open this page" })).toBeVisible();
  await expect(
    operator.page.getByText("Your role (operator) does not include the audit:read permission.", { exact: false }),
  ).toBeVisible();
  await expect(operator.page.getByRole("link", { name: "Audit log" })).toHaveCount(0);
  // A task's history needs only tasks:read: the operator reads it, without the chain verification.
  const history = new TaskHistoryPage(operator.page);
  await history.goto(LONG_HISTORY_TASK_ID);
  await expect(history.heading).toContainText(LONG_HISTORY_TASK_ID);
  await expect(history.rows.first()).toContainText("Updated in place in RUNNING");
  await expect(operator.page.getByText("Chain verification is for roles with the audit:read permission")).toBeVisible();
  await expect(operator.page.locator(".audit-badge[data-verified]")).toHaveCount(0);
  await operator.close();
});

test(`a ${LONG_HISTORY_EVENTS.toLocaleString("en-US")}-event task's history opens, scrolls down to its creation, and keeps only a window of rows in the DOM`, async ({
  browser,
}) => {
  test.setTimeout(300_000);
  const { page, close } = await openAs(browser, "auditor", `/tasks/${LONG_HISTORY_TASK_ID}/history`);
  const history = new TaskHistoryPage(page);
  const count = LONG_HISTORY_EVENTS.toLocaleString("en-US");
  const newest = `v${LONG_HISTORY_EVENTS - 1} → v${LONG_HISTORY_EVENTS}`;
  await expect(history.heading).toContainText(LONG_HISTORY_TASK_ID);
  await expect(history.status).toContainText(`${count} events · newest first`);
  await expect(history.rows.first()).toContainText("Updated in place in RUNNING");
  await expect(history.rows.first()).toContainText(newest);
  await expect(history.badge).toContainText(`Verified — 1 stream, ${count} entries`, { timeout: 120_000 });

  // Scroll to the bottom again and again: each time the next page loads, until the task's creation is on screen.
  const creation = history.rows.filter({ hasText: "Task created in RECEIVED" });
  for (let round = 0; round < 400 && (await creation.count()) === 0; round++) {
    const before = await history.loaded();
    // The events scroll with the page, not inside a box of their own.
    await page.evaluate(() => window.scrollTo({ top: document.documentElement.scrollHeight }));
    await expect
      .poll(async () => (await history.loaded()) > before || (await creation.count()) > 0, { timeout: 30_000 })
      .toBe(true);
  }
  await expect(creation).toBeVisible();
  await expect(creation).toHaveAttribute("aria-posinset", String(LONG_HISTORY_EVENTS));
  await expect(history.status).toContainText("all loaded");
  expect(await history.loaded()).toBe(LONG_HISTORY_EVENTS);
  // Rows near the bottom are the oldest: versions 2, 3, 4 are the moves to PLANNING, READY, RUNNING.
  await expect(history.rows.filter({ hasText: "Moved from RECEIVED to PLANNING" })).toBeVisible();
  const inDom = await history.rows.count();
  expect(inDom).toBeGreaterThan(5);
  expect(inDom).toBeLessThan(120);
  await page.screenshot({ path: `${shots}/long-history-bottom.png` });
  // Keyboard: Home goes back to the newest event.
  await history.viewport.focus();
  await page.keyboard.press("Home");
  await expect(history.rows.filter({ hasText: newest })).toBeVisible();
  await close();
});

test("GET /api/v1/audit/search answers pages to an auditor's token and problem+json for bad input", async ({
  playwright,
  baseURL,
  request,
}) => {
  const running = await createRunningTask(request);
  const auditor = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${demoObserver.token}` },
  });
  try {
    const first = await auditor.get(`/api/v1/audit/search?task=${running.id}&status=PLANNING&limit=1`);
    expect(first.status(), await first.text()).toBe(200);
    const page1 = (await first.json()) as {
      items: Array<{ details: Record<string, unknown> }>;
      next_cursor: string | null;
      matched_executions: number | null;
    };
    expect(page1.items).toHaveLength(1);
    expect(page1.items[0]!.details).toMatchObject({ from_status: "RECEIVED", to_status: "PLANNING" });
    expect(page1.matched_executions).toBeNull();
    const second = (await (
      await auditor.get(`/api/v1/audit/search?task=${running.id}&status=PLANNING&limit=1&cursor=${page1.next_cursor}`)
    ).json()) as typeof page1;
    expect(second.items[0]!.details).toMatchObject({ from_status: "PLANNING", to_status: "READY" });
    expect(second.next_cursor).toBeNull();

    const bad = await auditor.get("/api/v1/audit/search?kind=gossip&from=yesterday&colour=blue");
    expect(bad.status()).toBe(400);
    expect(bad.headers()["content-type"]).toContain("application/problem+json");
    const problem = (await bad.json()) as { errors: Array<{ field: string }> };
    const fields = problem.errors.map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(["from", "colour"]));
    expect(fields.some((f) => f.startsWith("kind"))).toBe(true);
    const backwards = await auditor.get("/api/v1/audit/search?from=2026-11-30T12:00:00Z&to=2026-11-30T11:00:00Z");
    expect(backwards.status()).toBe(400);
    expect(((await backwards.json()) as { errors: Array<{ field: string; message: string }> }).errors).toEqual([
      { field: "to", message: "must be later than from" },
    ]);
    // The agent's own token may not read the log.
    const refused = await request.get("/api/v1/audit/search", {
      headers: { Authorization: "Bearer vrt_demo_refund_bot_token_for_local_use_only" },
    });
    expect(refused.status()).toBe(403);
  } finally {
    await auditor.dispose();
  }
});
