import { expect, test, type APIRequestContext, type Browser, type Download, type Page } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { parseCsv } from "@/lib/use-cases/audit/audit-export";
import { createRunningTask } from "../pages/agent-seed";
import { axeViolations } from "../pages/axe";
import { signIn, type DemoUser } from "../pages/login-page";

/**
 * The global search, the keyboard shortcuts and the lists' downloads, in a
 * real browser against the demo server: an operator finds a task by its
 * customer and an execution by its key; an auditor searching the same
 * customer learns nothing about it; `?` lists the shortcuts and nothing fires
 * while typing; each list's Download CSV / JSON Lines gives its rows, with
 * the customer masked for a reader without clearance.
 */

const auth = { Authorization: `Bearer ${demoAgent.token}` };

interface Recorded {
  taskId: string;
  executionId: string;
  idempotencyKey: string;
  customerId: string;
}

/** A refund intent recorded over the agent API with a customer of its own. */
async function recordRefund(request: APIRequestContext): Promise<Recorded> {
  const running = await createRunningTask(request);
  const customerId = `cus_srch_${Math.random().toString(36).slice(2, 9)}`;
  const res = await request.post(`/api/v1/tasks/${encodeURIComponent(running.id)}/executions`, {
    headers: auth,
    data: {
      tool_call_id: "refund-1",
      tool: "payments.refund",
      request: { amount_cents: 4321, currency: "usd", charge_id: `ch_${running.id}`, customer_id: customerId },
      expected_version: running.version,
    },
  });
  expect(res.ok(), await res.text()).toBe(true);
  const body = (await res.json()) as { execution: { id: string; idempotency_key: string } };
  return {
    taskId: running.id,
    executionId: body.execution.id,
    idempotencyKey: body.execution.idempotency_key,
    customerId,
  };
}

async function openAs(browser: Browser, user: DemoUser, path: string, width = 1440): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  await signIn(page, user, path);
  return page;
}

async function textOf(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

async function download(page: Page, scope: string, name: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([
    page.waitForEvent("download"),
    // A list's download is a link (GET); a task history's is a form's button (POST: taking the copy is recorded).
    page
      .getByTestId(scope)
      .getByRole("link", { name })
      .or(page.getByTestId(scope).getByRole("button", { name }))
      .click(),
  ]);
  return { name: file.suggestedFilename(), text: await textOf(file) };
}

let seeded: Recorded;

// The demo's agents run beside these tests on a two-core machine: pages take seconds, not milliseconds.
test.setTimeout(180_000);

test.beforeAll(async ({ request }) => {
  seeded = await recordRefund(request);
});

test("an operator finds a task by its customer and an execution by its key from the header, by keyboard", async ({
  browser,
}) => {
  const page = await openAs(browser, "operator", "/dashboard");
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  const input = page.getByTestId("global-search-input");
  // The page is shown before its script has hydrated it: a "/" pressed before the shortcut's handler is
  // listening does nothing (a loaded CI run failed here), so it is pressed again until the handler takes it.
  // A "/" typed into the field once it has focus is replaced by fill().
  await expect(async () => {
    await page.keyboard.press("/");
    await expect(input).toBeFocused({ timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await input.fill(seeded.customerId);
  const results = page.getByTestId("global-search-results");
  const customers = results.getByRole("region", { name: "Customers" });
  await expect(customers.getByRole("link")).toHaveCount(1);
  await expect(customers.getByRole("link")).toContainText(seeded.customerId);
  await expect(customers.getByRole("link")).toContainText(`task ${seeded.taskId}`);
  expect(await axeViolations(page), "the open search dialog").toEqual([]);
  await page.screenshot({ path: "test-results/search-export/search-dialog-1440.png" });
  // Arrow down from the box to the first result, Enter opens the execution.
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/executions/${seeded.executionId}$`));

  // Ctrl+K from anywhere; a key pasted whole finds its execution.
  await page.keyboard.press("Control+k");
  await expect(input).toBeFocused();
  await input.fill(seeded.idempotencyKey);
  const keys = results.getByRole("region", { name: "Idempotency keys" });
  await expect(keys.getByRole("link")).toHaveCount(1);
  await expect(keys.getByRole("link")).toHaveAttribute("href", `/executions/${seeded.executionId}`);
  // Enter in the box: every result on /search.
  await input.press("Enter");
  await expect(page).toHaveURL(/\/search\?q=/);
  await expect(page.getByRole("heading", { level: 2, name: /Idempotency keys/ })).toBeVisible();
  await expect(
    page
      .getByRole("region", { name: /Idempotency keys/ })
      .getByRole("link", { name: new RegExp(seeded.idempotencyKey) }),
  ).toHaveAttribute("href", `/executions/${seeded.executionId}`);
  await page.context().close();
});

test("an auditor searching a customer id learns nothing about it, but finds the execution by its id", async ({
  browser,
}) => {
  const page = await openAs(browser, "auditor", `/search?q=${encodeURIComponent(seeded.customerId)}`);
  const results = page.getByTestId("search-results");
  await expect(results).toContainText("Nothing matches");
  await expect(results).not.toContainText(seeded.taskId);
  await expect(page.getByTestId("search-not-searched-customer")).toContainText("data:restricted");
  // The same words for a customer that does not exist: nothing tells the two apart.
  const shown = await results.innerText();
  await page.goto(`/search?q=cus_srch_nobody_at_all`);
  expect((await page.getByTestId("search-results").innerText()).replaceAll("cus_srch_nobody_at_all", "X")).toBe(
    shown.replaceAll(seeded.customerId, "X"),
  );
  await page.goto(`/search?q=${encodeURIComponent(seeded.executionId)}`);
  await expect(page.getByRole("heading", { level: 2, name: /Executions/ })).toBeVisible();
  await expect(
    page.getByTestId("search-results").getByRole("link", { name: new RegExp(seeded.executionId) }),
  ).toBeVisible();
  // An actor by the short form the console shows.
  await page.goto(`/search?q=agent%2Frefund-bot`);
  const actor = page.getByRole("region", { name: /Actors/ }).getByRole("link", { name: /agent\/refund-bot/ });
  await expect(actor).toHaveAttribute("href", /\/audit\?actor=spiffe/);
  for (const width of [390, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    expect(await axeViolations(page), `/search at ${width} px`).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  }
  await page.context().close();
});

test("? lists the shortcuts by keyboard, g t goes to tasks, and nothing fires while typing", async ({ browser }) => {
  const page = await openAs(browser, "operator", "/tasks");
  await expect(page.getByRole("heading", { level: 1, name: "Tasks" })).toBeVisible();
  // Typing in a field: neither ? nor / nor g t does anything.
  const field = page.getByLabel("Task id starts with");
  await field.focus();
  await page.keyboard.type("?/gt");
  await expect(field).toHaveValue("?/gt");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await field.fill("");
  await page.locator("body").click({ position: { x: 5, y: 300 } });
  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(help).toBeVisible();
  await expect(help).toContainText("In lists: j/k to move, Enter to open");
  for (const line of ["Go to the dashboard", "Go to tasks", "Go to the review queue", "Go to the inbox"])
    await expect(help).toContainText(line);
  expect(await axeViolations(page), "the shortcuts dialog").toEqual([]);
  await page.keyboard.press("Escape");
  await expect(help).toBeHidden();
  await page.keyboard.press("g");
  await page.keyboard.press("d");
  await expect(page).toHaveURL(/\/dashboard$/);
  await page.keyboard.press("g");
  await page.keyboard.press("t");
  await expect(page).toHaveURL(/\/tasks$/);
  await page.context().close();
});

test("each list downloads its rows as CSV and JSON Lines, the customer masked for an auditor", async ({
  browser,
  request,
}) => {
  const operator = await openAs(browser, "operator", "/executions?tool=payments.refund&status=");
  // Empty filters are left out of the download's address, as of the page's own links.
  const csvLink = operator.getByTestId("export-executions").getByRole("link", { name: "Download CSV" });
  await expect(csvLink).toHaveAttribute("href", "/api/console/executions/export?tool=payments.refund&format=csv");
  const executionsCsv = await download(operator, "export-executions", "Download CSV");
  expect(executionsCsv.name).toMatch(/^verity-executions-default-.*\.csv$/);
  const [header, ...rows] = parseCsv(executionsCsv.text);
  expect(header?.cells.slice(0, 4)).toEqual(["id", "task_id", "tool_call_id", "tool"]);
  const mine = rows.find((r) => r.cells[0] === seeded.executionId);
  expect(mine?.cells[header!.cells.indexOf("request")]).toContain(seeded.customerId);
  expect(rows.every((r) => r.cells[3] === "payments.refund")).toBe(true);

  await operator.goto(`/tasks?q=${encodeURIComponent(seeded.taskId)}`);
  const tasksJsonl = await download(operator, "export-tasks", "Download JSON Lines");
  const tasks = tasksJsonl.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; status: string });
  expect(tasks.map((t) => t.id)).toEqual([seeded.taskId]);

  await operator.goto("/alerts");
  const alertsCsv = await download(operator, "export-alerts", "Download CSV");
  expect(alertsCsv.text.split("\n")[0]).toBe(
    "id,kind,severity,status,task_id,execution_id,occurrences,message,created_at,last_seen_at,updated_at",
  );
  await operator.context().close();

  const auditor = await openAs(browser, "auditor", "/executions?tool=payments.refund");
  const masked = await download(auditor, "export-executions", "Download JSON Lines");
  const line = masked.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; request: Record<string, unknown> })
    .find((e) => e.id === seeded.executionId);
  expect(line?.request).toMatchObject({ customer_id: "[restricted]", amount_cents: 4321 });
  expect(masked.text).not.toContain(seeded.customerId);

  // A task's history, as an audit export (recorded, verifiable).
  await auditor.goto(`/tasks/${encodeURIComponent(seeded.taskId)}/history`);
  const history = await download(auditor, "history-export", "Download JSON Lines");
  const entries = history.text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { task_id: string; action: string });
  expect(entries.length).toBeGreaterThan(2);
  expect(entries.every((e) => e.task_id === seeded.taskId)).toBe(true);
  expect(entries.map((e) => e.action)).toContain("task.created");
  await auditor.context().close();

  // Without a session: refused as problem+json, never a file.
  const anonymous = await request.get("/api/console/tasks/export?format=csv", { headers: { Cookie: "" } });
  expect(anonymous.status()).toBe(401);
  expect(anonymous.headers()["content-type"]).toContain("application/problem+json");
});

test("a bad filter on an export is a problem naming the field, before any byte of a file", async ({ browser }) => {
  const page = await openAs(browser, "operator", "/tasks");
  const res = await page.request.get("/api/console/executions/export?status=NOPE&format=csv");
  expect(res.status()).toBe(400);
  expect(res.headers()["content-type"]).toContain("application/problem+json");
  expect(JSON.stringify(await res.json())).toContain("status");
  const format = await page.request.get("/api/console/alerts/export?format=xlsx");
  expect(format.status()).toBe(400);
  expect(JSON.stringify(await format.json())).toContain("format");
  await page.context().close();
});

test("the task list counts every match, sorts by last change or creation both ways, and its actor and workflow links filter", async ({
  browser,
}) => {
  const page = await openAs(browser, "operator", "/tasks?workflow=&status=&q=");
  // The empty fields are left out of the address.
  await expect(page).toHaveURL(/\/tasks$/);
  await expect(page.getByTestId("task-total")).toHaveText(/^\d+ tasks in all$/);
  const updated = page.getByRole("columnheader", { name: /Updated/ }).first();
  await expect(updated).toHaveAttribute("aria-sort", "descending");
  await updated.getByRole("link").click();
  await expect(page).toHaveURL(/order=asc/);
  await expect(page.getByRole("columnheader", { name: /Updated/ }).first()).toHaveAttribute("aria-sort", "ascending");
  // By creation: newest first, then oldest first, each page in that order (the rows' exact times say so).
  const created = page.getByRole("columnheader", { name: /Created/ });
  await expect(created).not.toHaveAttribute("aria-sort", /./);
  await created.getByRole("link").click();
  await expect(page).toHaveURL(/sort=created/);
  await expect(page).not.toHaveURL(/order=/);
  await expect(page.getByRole("columnheader", { name: /Created/ })).toHaveAttribute("aria-sort", "descending");
  const createdTimes = () =>
    page
      .locator("table.task-table tbody tr td:nth-of-type(5) time")
      .evaluateAll((els) => els.map((el) => Date.parse(el.getAttribute("datetime") ?? "")));
  const newestFirst = await createdTimes();
  expect(newestFirst.length).toBeGreaterThan(1);
  expect(newestFirst).toEqual([...newestFirst].sort((a, b) => b - a));
  await page
    .getByRole("columnheader", { name: /Created/ })
    .getByRole("link")
    .click();
  await expect(page).toHaveURL(/sort=created&order=asc/);
  const oldestFirst = await createdTimes();
  expect(oldestFirst).toEqual([...oldestFirst].sort((a, b) => a - b));
  expect(oldestFirst[0]).toBeLessThanOrEqual(newestFirst[newestFirst.length - 1]!);
  // The agent that changed a task last: its link filters the list to it, the filter shown in its short form's field.
  await page.goto("/tasks");
  const actorLink = page.locator("table.task-table tbody tr").first().locator("td").last().getByRole("link");
  const actor = (await actorLink.getAttribute("href"))!;
  await actorLink.click();
  await expect(page).toHaveURL(new RegExp(`actor=`));
  expect(actor).toContain("actor=");
  await expect(page.getByTestId("task-total")).toHaveText(/\d+ tasks? match(es)? these filters/);
  // A short form typed by hand finds the same tasks.
  await page.getByLabel("Last changed by").fill("refund-bot");
  await page.getByRole("search", { name: "Filter tasks" }).getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/\/tasks\?actor=refund-bot$/);
  await expect(page.locator("table.task-table tbody tr").first()).toContainText("agent/refund-bot");
  await page.context().close();
});

test("the audit log's actor filter takes the short form rows show, and an actor in a row applies it", async ({
  browser,
}) => {
  const page = await openAs(browser, "auditor", "/audit?actor=system%2Freconciler");
  const rows = page.getByRole("main").locator(".audit-row");
  await expect(rows.first()).toBeVisible();
  await expect(rows.first().locator(".identity")).toHaveText("system/reconciler");
  await page.goto("/audit?actor=reconciler");
  await expect(rows.first().locator(".identity")).toContainText("reconciler");
  // A row's actor is a link to the log filtered to it.
  await page.goto("/audit");
  const actor = rows.first().getByRole("link", { name: /\// }).first();
  const name = (await actor.textContent())!.trim();
  await actor.click();
  await expect(page).toHaveURL(new RegExp(`actor=${encodeURIComponent(name).replace(/%2F/g, "(%2F|/)")}`));
  await expect(rows.first().locator(".identity")).toHaveText(name);
  await page.context().close();
});
