import { expect, test, type Page } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createRunningTask, transition, uniqueTaskId } from "../pages/agent-seed";
import { AccountPage } from "../pages/account-page";
import { AgentsPage } from "../pages/agents-page";
import { LoginPage, signIn } from "../pages/login-page";
import { freezeRefund } from "../pages/reviews-seed";
import { TaskDetailPage } from "../pages/task-detail-page";
import { DashboardPage } from "../pages/dashboard-page";

/**
 * Live updates pushed (docs/live-updates.md): a page follows changes over
 * its one Server-Sent Events stream, made from the database's announcement
 * of the writing transaction, and polls only while that stream is down.
 * Changes are made through the agent API, as agents make them.
 */
test.describe.configure({ timeout: 180_000 });

test("a task page follows a change made through the API by its stream, not by polling", async ({ page, request }) => {
  const task = await createRunningTask(request);
  const versionAsks: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes(`/api/console/tasks/${encodeURIComponent(task.id)}/version`)) versionAsks.push(r.url());
  });
  await signIn(page, "operator", `/tasks/${task.id}`);
  const detail = new TaskDetailPage(page);
  const live = page.locator("p.live");
  await expect(detail.status).toHaveText("RUNNING");
  // The stream is open and the server listening: no polling interval runs.
  await expect(live).toHaveAttribute("data-live-mode", "stream");
  await expect(live).toHaveText("Live");
  // Opening the stream reads the token once (whatever changed between the render and the stream).
  await expect.poll(() => versionAsks.length).toBeGreaterThanOrEqual(1);
  const asked = versionAsks.length;

  await transition(request, task, { to: "CANCELLED", reason: "Pushed to the open page" });
  // A refresh is a whole server render: slow on a loaded machine, as the other live specs allow.
  await expect(detail.status).toHaveText("CANCELLED", { timeout: 30_000 });
  await expect(live).toHaveText(/^Live · updated \d{2}:\d{2}:\d{2} UTC$/);
  // The token was asked because an event arrived (a poll would say "poll"), once more and no more.
  await expect(live).toHaveAttribute("data-refreshed-by", "stream");
  expect(versionAsks).toHaveLength(asked + 1);
});

test("a page under a steady stream of changes keeps landing on them, not refreshing forever", async ({
  page,
  request,
}) => {
  // An agent patches one task back to back, each change announced before the page's last refresh has landed:
  // each refresh must still reach the screen (an inbox stuck on "Loading the latest inbox…" while other
  // people worked was how this showed).
  let task = await createRunningTask(request);
  await signIn(page, "operator", "/tasks");
  const live = page.locator("p.live");
  await expect(live).toHaveAttribute("data-live-mode", "stream");
  let churning = true;
  const churn = (async () => {
    for (let n = 1; churning; n++) task = await transition(request, task, { patch: { budget: { tokens_spent: n } } });
  })();
  try {
    const landed = new Set<string>();
    await expect
      .poll(
        async () => {
          const text = await live.innerText();
          const at = /updated (\d{2}:\d{2}:\d{2}) UTC/.exec(text)?.[1];
          if (at) landed.add(at);
          return landed.size;
        },
        { timeout: 45_000, intervals: [250] },
      )
      .toBeGreaterThanOrEqual(3);
  } finally {
    churning = false;
    await churn;
  }
});

test("the dashboard follows a change by its stream, not by polling", async ({ page, request }) => {
  // The dashboard's reads, counted from before the page opens: with the stream open it reads only when events arrive.
  const dashboardReads: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes("/api/console/dashboard")) dashboardReads.push(r.url());
  });
  await signIn(page, "operator", "/dashboard");
  const dashboard = new DashboardPage(page);
  const live = page.locator("p.live");
  await expect(dashboard.heading).toBeVisible();
  // The stream is open: no polling interval runs (it would read every 10 s).
  await expect(live).toHaveAttribute("data-live-mode", "stream");
  await expect(live).toHaveText(/^Live · as of \d{2}:\d{2}:\d{2} UTC$/);
  const waiting = dashboard.headlineLink("reviews waiting");
  const shown = async () => Number((await waiting.innerText()).match(/\d[\d,]*/)![0].replaceAll(",", ""));
  const readsBefore = dashboardReads.length;

  await freezeRefund(request, { amountCents: 1_357 });
  // The freeze's announcement made the dashboard read again.
  await expect.poll(() => dashboardReads.length, { timeout: 30_000 }).toBeGreaterThan(readsBefore);
  // And it shows the server's number. Other specs freeze and decide refunds at the same time, so
  // "more than before" can fail while the dashboard is right (a decision elsewhere cancels this
  // freeze out, as a clean-clone run saw: 10 stayed 10); the server's own count, asked again until
  // the two agree, cannot.
  const serverCount = async () => {
    const res = await page.request.get("/api/console/dashboard");
    expect(res.status()).toBe(200);
    return ((await res.json()) as { headline: { reviewBacklog: number } }).headline.reviewBacklog;
  };
  await expect.poll(async () => (await shown()) === (await serverCount()), { timeout: 30_000 }).toBe(true);
  // The numbers were read because events arrived (a poll would say "poll"), and the page never polled.
  await expect(live).toHaveAttribute("data-refreshed-by", "stream");
  await expect(live).toHaveAttribute("data-live-mode", "stream");
});

test("the badges start from the server's numbers and the review queue's counts up from the stream", async ({
  page,
  request,
}) => {
  // The numbers are in the server's HTML: never an empty badge filled in later.
  await page.route("**/api/console/events", (route) => route.abort());
  await signIn(page, "operator", "/tasks");
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByTestId("review-count")).toHaveText(/^\d+$/);
  await expect(nav.getByTestId("inbox-count")).toHaveText(/^\d+$/);
  // Without its stream the page polls, and says so.
  await expect(page.locator("p.live")).toHaveAttribute("data-live-mode", "polling");
  await expect(page.locator("p.live")).toHaveText(/^Live \(polling\)/);
  await page.unroute("**/api/console/events");
  // The badge's reads, counted from here: with the stream open it reads only when an event arrives.
  const badgeReads: string[] = [];
  page.on("request", (r) => {
    if (r.url().includes("/api/console/reviews/latest")) badgeReads.push(r.url());
  });
  badgeReads.length = 0; // reads by the polling page before are not this page's
  await page.reload();
  await expect(page.locator("p.live")).toHaveAttribute("data-live-mode", "stream");
  // Opening the stream reads once (whatever changed between the render and the stream).
  await expect.poll(() => badgeReads.length).toBeGreaterThanOrEqual(1);
  const readsBefore = badgeReads.length;
  const badge = nav.getByTestId("review-count");
  await freezeRefund(request, { amountCents: 2_468 });
  // The freeze's announcement made the badge read again; the page is not polling.
  await expect.poll(() => badgeReads.length, { timeout: 30_000 }).toBeGreaterThan(readsBefore);
  await expect(page.locator("p.live")).toHaveAttribute("data-live-mode", "stream");
  // And the badge shows the server's number now. Other specs freeze and decide refunds at the same
  // time, so "one more than before" can fail while the badge is right (a decision elsewhere cancels
  // this freeze out); the server's own count, asked again until the two agree, cannot.
  const serverCount = async () => {
    const res = await page.request.get("/api/console/reviews/latest?status=OPEN");
    expect(res.status()).toBe(200);
    return ((await res.json()) as { openCount: number }).openCount;
  };
  await expect
    .poll(async () => Number(await badge.innerText()) === (await serverCount()), { timeout: 30_000 })
    .toBe(true);
});

/** The `change` events a page's session is sent, gathered by a second EventSource in the page. */
async function gatherChanges(page: Page): Promise<() => Promise<Array<{ kind: string; id: string; taskId?: string }>>> {
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const w = window as unknown as { gathered: unknown[] };
        w.gathered = [];
        const source = new EventSource("/api/console/events");
        source.addEventListener("change", (e) => w.gathered.push(JSON.parse((e as MessageEvent<string>).data)));
        source.addEventListener("status", (e) => {
          if ((JSON.parse((e as MessageEvent<string>).data) as { live: boolean }).live) resolve();
        });
        source.onerror = () => reject(new Error("the event stream was refused"));
      }),
  );
  return () => page.evaluate(() => (window as unknown as { gathered: Array<{ kind: string; id: string }> }).gathered);
}

test("another tenant's change never reaches a page, and its own does", async ({ page, browser, request }) => {
  // Tenant B, opened by the platform admin (the demo's admin), with an agent of its own.
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const tenantB = `e2e-live-${run}`;
  const adminB = { username: `live-b-${run}`, password: `live b's own password ${run}` };
  await signIn(page, "admin", "/platform/tenants");
  const form = page.getByRole("form", { name: "Open a tenant" });
  await form.getByLabel("Tenant id").fill(tenantB);
  await form.getByLabel("Name", { exact: true }).fill("Live B");
  await form.getByLabel("Admin username").fill(adminB.username);
  await form.getByLabel("Admin display name").fill("Bo Live");
  await form.getByRole("button", { name: "Open tenant" }).click();
  await expect(form.getByRole("status")).toContainText(`Tenant ${tenantB} (Live B) is open`);
  const initialPassword = await form.getByTestId("initial-password").innerText();

  const pageB = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const login = new LoginPage(pageB);
  await login.goto("/tasks");
  await login.fill(adminB.username, initialPassword);
  await pageB.waitForURL((url) => url.pathname === "/account");
  await new AccountPage(pageB).replaceOneTimePassword(initialPassword, adminB.password);
  const agents = new AgentsPage(pageB);
  await agents.goto();
  const agentB = await agents.create({ name: `live-bot-${run}`, workflows: ["agent-task"], tools: [] });
  const asB = { Authorization: `Bearer ${agentB.secret}` };
  const asA = { Authorization: `Bearer ${demoAgent.token}` };
  const newTask = async (auth: Record<string, string>) => {
    const id = uniqueTaskId("live");
    const res = await request.post("/api/v1/tasks", {
      headers: auth,
      data: { workflow: "agent-task", task_id: id, intent_id: `intent-${id}` },
    });
    expect(res.status(), await res.text()).toBe(201);
    return id;
  };

  // Each tenant's admin with a stream open.
  const changesOfA = await gatherChanges(page);
  await pageB.goto("/tasks");
  const changesOfB = await gatherChanges(pageB);

  // B's task, then A's: announcements arrive in commit order, so once A's is in, B's would have been too.
  const bFirst = await newTask(asB);
  const aTask = await newTask(asA);
  await expect.poll(async () => (await changesOfA()).map((c) => c.id)).toContain(aTask);
  expect((await changesOfA()).filter((c) => c.id === bFirst || c.taskId === bFirst)).toEqual([]);
  // And the other way: B's next task arrives at B, A's never did.
  const bSecond = await newTask(asB);
  await expect.poll(async () => (await changesOfB()).map((c) => c.id)).toContain(bSecond);
  const seenByB = await changesOfB();
  expect(seenByB.map((c) => c.id)).toContain(bFirst);
  expect(seenByB.filter((c) => c.id === aTask || c.taskId === aTask)).toEqual([]);
  // Only ids and versions cross: nothing of the task's data.
  for (const change of seenByB) expect(Object.keys(change).sort()).toEqual(expect.arrayContaining(["id", "kind"]));
  expect(JSON.stringify(seenByB)).not.toContain(`intent-${bFirst}`);
  await pageB.context().close();
});
