import { expect, test, type Browser, type Page } from "@playwright/test";
import {
  createRunningTask,
  getTaskVersion,
  listTransitionActors,
  transition,
  type SeededTask,
} from "../pages/agent-seed";
import {
  CheckpointInspectorPage,
  TaskCheckpointsPage,
  acquireLease,
  addNoteWithReceipt,
  takeCheckpoint,
  type SeededCheckpoint,
} from "../pages/checkpoints-page";
import { axeViolations } from "../pages/axe";
import { signIn, type DemoUser } from "../pages/login-page";
import { captureServerAction, replayServerAction } from "../pages/server-action";
import { TaskDetailPage } from "../pages/task-detail-page";

/**
 * Checkpoints in the console, end to end: tasks, checkpoints, receipts and
 * leases made through the agent API (e2e/pages/checkpoints-page.ts), then
 * verified, planned and restored by people in the browser. Only engineers
 * restore; the server refuses anyone else whatever the page showed.
 */
const shots = "test-results/checkpoint-screenshots";
test.use({ viewport: { width: 1280, height: 800 } });
test.setTimeout(120_000);

const engineerIdentity = "spiffe://verity.local/user/engineer";

/** A running task (v4) with a checkpoint of v4, then moved on to v5 by the agent: the checkpoint is stale. */
async function staleCheckpoint(
  request: Parameters<typeof createRunningTask>[0],
): Promise<{ task: SeededTask; checkpoint: SeededCheckpoint }> {
  const running = await createRunningTask(request);
  const checkpoint = await takeCheckpoint(request, running);
  const task = await transition(request, running, { patch: { budget: { tokens_spent: 800, hops_used: 1 } } });
  return { task, checkpoint };
}

async function openAs(
  browser: Browser,
  user: DemoUser,
  path: string,
): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, user, path);
  return { page, close: () => context.close() };
}

/** Plans, is told "stale", ticks rewind and plans the rewind: the engineer's way to an allowed plan. */
async function planRewind(
  inspector: CheckpointInspectorPage,
  checkpointVersion: number,
  taskVersion: number,
): Promise<void> {
  await inspector.planButton.click();
  await expect(inspector.plan).toContainText("Refused — Stale: older than the committed state");
  await expect(inspector.plan).toContainText(
    `The checkpoint is of version ${checkpointVersion}, older than the committed version ${taskVersion}`,
  );
  await expect(inspector.confirm).toHaveCount(0);
  await inspector.rewind.check();
  await inspector.planButton.click();
  await expect(inspector.plan).toContainText(
    `Allowed: a rewind to the state of version ${checkpointVersion}, written as new version ${taskVersion + 1}`,
  );
}

test("an engineer verifies a checkpoint, sees the restore plan, and restores it: a new version in the timelines, history intact", async ({
  page,
  request,
}) => {
  const running = await createRunningTask(request);
  const checkpoint = await takeCheckpoint(request, running);
  const noted = await addNoteWithReceipt(request, running);
  const task = await transition(request, noted.task, {
    patch: { budget: { currency_spent_usd: 0.75, tokens_spent: 1200, hops_used: 2 } },
  });
  expect(task.version).toBe(7);
  await acquireLease(request, task.id);

  await signIn(page, "engineer", `/tasks/${task.id}`);
  const taskPage = new TaskDetailPage(page);
  const card = page.getByRole("region", { name: "Checkpoints", exact: true });
  await expect(card).toContainText("1 checkpoint, the newest of version 4.");
  await card.getByRole("link", { name: /Checkpoint timeline, inspect and restore/ }).click();

  const list = new TaskCheckpointsPage(page);
  await expect(list.heading).toContainText(`Checkpoints of ${task.id}`);
  await expect(list.chart).toBeVisible();
  await expect(list.rows).toHaveCount(1);
  await expect(list.row(checkpoint.id)).toContainText("version 4");
  await expect(list.row(checkpoint.id)).toContainText("On demand");
  await expect(list.row(checkpoint.id)).toContainText("Valid");
  await page.screenshot({ path: `${shots}/timeline.png`, fullPage: true });
  // On demand, from the console: a second checkpoint, of the version the page shows.
  await list.takePanel.getByRole("button", { name: "Take checkpoint of version 7" }).click();
  await expect(list.takePanel.getByRole("status").first()).toContainText("Checkpoint taken of version 7 (RUNNING).");
  await expect(list.rows).toHaveCount(2);
  await expect(list.rows.first()).toContainText("version 7");
  await expect(list.rows.first()).toContainText("current");
  // Version 7 has its checkpoint now: a second of the same state is not offered.
  await page.reload();
  await expect(list.takePanel).toContainText("Version 7 already has a valid checkpoint");
  await expect(list.takePanel.getByRole("button", { name: /Take checkpoint/ })).toHaveCount(0);
  await list.open(checkpoint.id);

  const inspector = new CheckpointInspectorPage(page);
  await expect(inspector.title).toHaveText("Checkpoint of version 4");
  await expect(inspector.verdict).toContainText("Valid");
  await expect(inspector.checks).toHaveCount(8);
  await expect(inspector.checks.filter({ hasText: "FAILED" })).toHaveCount(0);
  await inspector.verifyAgain.click();
  await expect(inspector.integrity.getByRole("status").filter({ hasText: "Verified again at" })).toContainText(
    "all 8 checks passed",
  );
  await expect(inspector.integrity.locator("[data-check=signature]")).toContainText("HMAC-SHA256 with key");
  await expect(inspector.diff).toContainText("budget.currency_spent_usd");
  await expect(inspector.diff).toContainText("0.75");
  await expect(inspector.receipts).toContainText("None: no side effect had succeeded when it was taken.");
  await expect(inspector.snapshot).toContainText('"status": "RUNNING"');
  await page.screenshot({ path: `${shots}/inspector.png`, fullPage: true });

  await planRewind(inspector, 4, 7);
  // The note's receipt is answered on resume, not sent again; nothing uncertain blocks; the agent's lease is fenced.
  await expect(inspector.effectGroup("skippedByReceipt")).toContainText("Skipped by receipt (1)");
  await expect(inspector.effectGroup("skippedByReceipt")).toContainText("crm.add_note");
  await expect(inspector.effectGroup("needsReconciliation")).toContainText("Needs reconciliation (0)");
  await expect(inspector.effectGroup("needsHuman")).toContainText("Needs a person (0)");
  await expect(inspector.plan).toContainText("money, tokens and hops spent stay spent");
  await expect(inspector.plan.locator("table.ckpt-budget tbody tr").first()).toContainText("$0.00$0.75$0.75");
  await expect(inspector.plan).toContainText("The lease of agent/refund-bot");
  await expect(inspector.plan).toContainText("is fenced");
  await expect(inspector.confirm).toHaveText("Rewind as version 8");
  await inspector.restore.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/restore-plan.png`, fullPage: true });

  // The reason is required, and said so before anything is sent.
  await inspector.confirm.click();
  await expect(inspector.restore.locator(".field-error")).toHaveText(
    "Give a reason: it is recorded in the task's timeline with the restore.",
  );
  expect(await getTaskVersion(request, task.id)).toEqual({ version: 7, status: "RUNNING" });

  await inspector.reason.fill("the agent looped after the note; resume from before it");
  await inspector.confirm.click();
  await expect(inspector.done).toContainText(
    "Rewound to the state of version 4: the task is now at version 8 (RUNNING). Earlier versions stay in the history.",
  );
  await expect(inspector.taskVersion).toHaveText("version 8");
  await expect(inspector.history.first()).toContainText("Rewind applied: version 7 → 8");
  await expect(inspector.history.first()).toContainText("the agent looped after the note");
  await page.screenshot({ path: `${shots}/restore-result.png`, fullPage: true });

  await inspector.restore.getByRole("link", { name: "See version 8 in the task's timeline" }).click();
  await expect(taskPage.version).toHaveText("version 8");
  await expect(taskPage.timelineItems.first()).toContainText("v8");
  await expect(taskPage.timelineItems.first()).toContainText(engineerIdentity);
  await expect(taskPage.timelineItems.first()).toContainText(
    `restored from checkpoint ${checkpoint.id} (version 4): the agent looped after the note`,
  );
  // History is never rewritten: version 7 and everything before it are still there.
  await expect(taskPage.timelineItems).toHaveCount(8);
  await expect(taskPage.timelineItems.nth(1)).toContainText("v7");

  await list.goto(task.id);
  await expect(list.restores.first()).toContainText("Rewind applied: version 7 → 8");
  await expect(list.timeline.locator("svg text").filter({ hasText: "↺" })).toHaveCount(1);
  expect(await getTaskVersion(request, task.id)).toEqual({ version: 8, status: "RUNNING" });
  const log = await listTransitionActors(request, task.id);
  expect(log).toHaveLength(8);
  expect(log.at(-1)).toMatchObject({ to_status: "RUNNING", actor: engineerIdentity });
});

test("a stale restore is refused with the reason; confirming after the task moved is a conflict; a rewind then applies as a new version", async ({
  page,
  request,
}) => {
  const { task, checkpoint } = await staleCheckpoint(request);
  await signIn(page, "engineer", `/checkpoints/${checkpoint.id}`);
  const inspector = new CheckpointInspectorPage(page);
  // The engineer keeps looking at version 5: no live refresh tells them the agent moved on.
  await inspector.pauseLiveUpdates();
  await planRewind(inspector, 4, 5);

  const moved = await transition(request, task, { patch: { budget: { hops_used: 2 } } });
  expect(moved.version).toBe(6);
  await inspector.reason.fill("resume from the checkpoint");
  await inspector.confirm.click();
  await expect(inspector.alert).toContainText(
    "Someone else changed this task (now version 6) — here is the fresh state; nothing was overwritten. Plan the restore again from it.",
  );
  // That plan is spent: confirming needs a new one, made from the task as it is now.
  await expect(inspector.confirm).toHaveCount(0);
  await expect(inspector.taskVersion).toHaveText("version 6");
  expect(await getTaskVersion(request, task.id)).toEqual({ version: 6, status: "RUNNING" });

  await expect(inspector.rewind).toBeChecked();
  await inspector.planButton.click();
  await expect(inspector.plan).toContainText("Allowed: a rewind to the state of version 4, written as new version 7");
  await inspector.reason.fill("resume from the checkpoint, second try");
  await inspector.confirm.click();
  await expect(inspector.done).toContainText("the task is now at version 7 (RUNNING)");

  // Both attempts are recorded: the refused one with its reason, the applied one.
  await expect(inspector.history).toHaveCount(2);
  await expect(inspector.history.nth(0)).toContainText("Rewind applied: version 6 → 7");
  await expect(inspector.history.nth(1)).toContainText("Refused at version 6: the task moved on");
  const log = await listTransitionActors(request, task.id);
  expect(log.map((t) => t.actor === engineerIdentity)).toEqual([false, false, false, false, false, false, true]);
});

test("an operator sees what a restore would do but has no control, and the server refuses the restore action an operator posts", async ({
  browser,
  request,
}) => {
  const { task, checkpoint } = await staleCheckpoint(request);
  const engineer = await openAs(browser, "engineer", `/checkpoints/${checkpoint.id}`);
  const operator = await openAs(browser, "operator", `/checkpoints/${checkpoint.id}`);
  try {
    const theirs = new CheckpointInspectorPage(operator.page);
    await expect(theirs.restore).toContainText(
      "Restoring is for engineers. Your role (operator) can inspect checkpoints and see what a restore would do, but not restore one",
    );
    await expect(theirs.plan).toContainText("Refused — Stale: older than the committed state");
    await expect(theirs.restore.getByRole("button")).toHaveCount(0);
    await expect(theirs.restore.getByRole("checkbox")).toHaveCount(0);
    await expect(theirs.reason).toHaveCount(0);
    await operator.page.screenshot({ path: `${shots}/inspector-operator.png`, fullPage: true });

    // The engineer's browser builds a real restore; it never reaches the server. The operator's session sends it.
    const mine = new CheckpointInspectorPage(engineer.page);
    await planRewind(mine, 4, 5);
    await mine.reason.fill("operator should not be able to do this");
    const action = await captureServerAction(engineer.page, () => mine.confirm.click());
    const refused = await replayServerAction(operator.page.request, action);
    expect(refused.ok()).toBe(true);
    expect(await refused.text()).toContain(
      "Not allowed: The operator role does not have the checkpoints:restore permission. Nothing was changed.",
    );
    expect(await getTaskVersion(request, task.id)).toEqual({ version: 5, status: "RUNNING" });

    // Nor may an operator take a checkpoint.
    const list = new TaskCheckpointsPage(operator.page);
    await list.goto(task.id);
    await expect(list.readOnly).toContainText("Your role (operator) can inspect checkpoints but not take one");
    await expect(list.takePanel).toHaveCount(0);
  } finally {
    await engineer.close();
    await operator.close();
  }
});

test("an auditor sees the timeline, the inspector and the plan, read-only", async ({ page, request }) => {
  const { task, checkpoint } = await staleCheckpoint(request);
  await signIn(page, "auditor", `/tasks/${task.id}/checkpoints`);
  const list = new TaskCheckpointsPage(page);
  await expect(list.chart).toBeVisible();
  await expect(list.row(checkpoint.id)).toContainText("Valid");
  await expect(list.readOnly).toContainText("Your role (auditor) can inspect checkpoints but not take one");
  await expect(list.takePanel).toHaveCount(0);

  await list.open(checkpoint.id);
  const inspector = new CheckpointInspectorPage(page);
  await expect(inspector.checks).toHaveCount(8);
  await expect(inspector.restore).toContainText(
    "Your role (auditor) can inspect checkpoints and see what a restore would do, but not restore one",
  );
  await expect(inspector.plan).toContainText("Refused — Stale: older than the committed state");
  await expect(inspector.restore.getByRole("button")).toHaveCount(0);
  await expect(inspector.confirm).toHaveCount(0);
  expect(await getTaskVersion(request, task.id)).toEqual({ version: 5, status: "RUNNING" });
});

test("the timeline reads with no checkpoint and with fifty, and the list is usable from the keyboard", async ({
  page,
  request,
}) => {
  const empty = await createRunningTask(request);
  let busy = await createRunningTask(request);
  for (let i = 1; i <= 25; i++) {
    // An artifact change is a boundary (artifacts_validated); the agent also takes one on demand after it.
    busy = await transition(request, busy, {
      patch: { artifacts: { implementation_plan: `plans/step-${i}.md` }, budget: { tokens_spent: i * 100 } },
    });
    await takeCheckpoint(request, busy);
  }

  await signIn(page, "engineer", `/tasks/${empty.id}/checkpoints`);
  const list = new TaskCheckpointsPage(page);
  await expect(list.emptyState).toContainText("No checkpoints yet");
  await expect(list.emptyState).toContainText(
    "They are taken at gates, before irreversible effects, on cancel, escalation and terminal states, or on demand.",
  );
  await expect(list.chart).toBeVisible();
  await page.screenshot({ path: `${shots}/timeline-empty.png`, fullPage: true });

  await list.goto(busy.id);
  await expect(list.rows).toHaveCount(50);
  await expect(list.list.locator("h2")).toHaveText("50 checkpoints");
  await expect(list.chart).toBeVisible();
  await list.timeline.screenshot({ path: `${shots}/timeline-50-chart.png` });
  await page.screenshot({ path: `${shots}/timeline-50.png`, fullPage: true });
  // Each mark is an image with its name (axe: aria-prohibited-attr on a bare <g> before).
  await expect(list.chart.getByRole("img", { name: /^Checkpoint of version \d+, / }).first()).toBeVisible();
  expect(await axeViolations(page)).toEqual([]);

  // The newest first; its link opens the inspector from the keyboard.
  await expect(list.rows.first()).toContainText(`version ${busy.version}`);
  await list.rows.first().getByRole("link").focus();
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/checkpoints\/[^/]+$/);
  await expect(new CheckpointInspectorPage(page).title).toHaveText(`Checkpoint of version ${busy.version}`);
});

test("a finished task offers no restore and no new instruction, and says why in words", async ({ page, request }) => {
  const running = await createRunningTask(request);
  const checkpoint = await takeCheckpoint(request, running);
  const cancelled = await transition(request, running, { to: "CANCELLED", reason: "customer withdrew" });
  expect(cancelled.status).toBe("CANCELLED");

  await signIn(page, "engineer", `/checkpoints/${checkpoint.id}`);
  const inspector = new CheckpointInspectorPage(page);
  const restore = page.getByRole("region", { name: "Restore", exact: true });
  await expect(restore).toContainText("The task has ended (CANCELLED)");
  await expect(inspector.planButton).toHaveCount(0);

  await page.goto(`/tasks/${encodeURIComponent(running.id)}`);
  const instructions = page.getByRole("region", { name: "Instructions" });
  await expect(instructions).toContainText("The task has ended (CANCELLED)");
  await expect(instructions.getByRole("form", { name: "Add an instruction" })).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);
});
