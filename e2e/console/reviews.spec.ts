import { expect, test, type Browser, type Page } from "@playwright/test";
import { getTaskVersion } from "../pages/agent-seed";
import { signIn, type DemoUser } from "../pages/login-page";
import { ReviewDetailPage, ReviewQueuePage } from "../pages/reviews-page";
import {
  completeValidatedTask,
  freezeMismatchedRefund,
  freezeRefund,
  lookupAtProvider,
  releaseHeld,
  refundsForExecution,
  sandboxUrl,
  type FrozenRefund,
} from "../pages/reviews-seed";
import { captureServerAction, replayServerAction } from "../pages/server-action";
import { TaskDetailPage } from "../pages/task-detail-page";

/**
 * The review queue end to end: refunds frozen through the agent API, the
 * sandbox provider and the server's reconciler (e2e/pages/reviews-seed.ts),
 * decided by people in the console, checked at the provider.
 */
const shots = "test-results/review-screenshots";
test.use({ viewport: { width: 1280, height: 800 } });
// Each test freezes its own refund (a few seconds of reconciling) and signs several people in.
test.setTimeout(120_000);

async function openReviewAs(
  browser: Browser,
  user: DemoUser,
  frozen: FrozenRefund,
): Promise<{ page: Page; review: ReviewDetailPage; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await signIn(page, user, "/reviews");
  await new ReviewQueuePage(page).open(frozen.task.id);
  return { page, review: new ReviewDetailPage(page), close: () => context.close() };
}

test("an operator approves a frozen refund: sent once more under the same key, exactly one refund, and the task validates and completes", async ({
  page,
  request,
}) => {
  const frozen = await freezeRefund(request, { amountCents: 12_500 });
  await signIn(page, "operator", "/reviews");
  const queue = new ReviewQueuePage(page);
  const row = queue.row(frozen.task.id);
  await expect(row).toContainText("$125.00");
  await expect(row).toContainText(frozen.customerId);
  await expect(row).toContainText("payments.refund");
  await expect(row).toContainText(frozen.idempotencyKey);
  await expect(row).toContainText("0 of 1 approval: needs one operator");
  // The provider's verdict is in the row: what the decision will follow, before opening it.
  await expect(row.getByTestId("provider-verdict")).toHaveText("Provider: not found");
  await expect(queue.navCount).not.toHaveText("0");
  await page.screenshot({ path: `${shots}/review-queue.png`, fullPage: true });

  await queue.open(frozen.task.id);
  const review = new ReviewDetailPage(page);
  await expect(review.title).toHaveText(`Refund of $125.00 to ${frozen.customerId}`);
  await expect(review.status).toHaveText("OPEN");
  await expect(review.intendedCall).toContainText(frozen.idempotencyKey);
  await expect(review.intendedCall).toContainText("NEEDS_HUMAN");
  // The reconciler asked while the agent's request was still in flight; now the provider has nothing under the key.
  await expect(review.lookup).toContainText("Not found");
  await expect(review.history.last()).toContainText("NEEDS_HUMAN");
  await expect(review.history.last()).toContainText("in_flight");
  // The provider's answer comes before the call it is about, and picks the solid button: nothing there → send it.
  expect(
    await review.lookup.evaluate(
      (lookup, call) => Boolean(call && lookup.compareDocumentPosition(call) & Node.DOCUMENT_POSITION_FOLLOWING),
      await review.intendedCall.elementHandle(),
    ),
  ).toBe(true);
  await expect(review.button("Approve & execute")).toHaveClass(/(^|\s)button--primary(\s|$)/);
  await expect(review.button("Accept provider's evidence")).not.toHaveClass(/button--primary/);
  await expect(review.panel.getByTestId("final-approver")).toHaveText(
    "Your approval sends the $125.00 refund: Approve & execute sends it now, under the same key.",
  );
  await expect(review.intendedCall.getByTestId("first-sent")).not.toContainText("not sent");

  await review.decide(
    "Approve & execute",
    "provider has no refund under the key; customer confirmed they were not refunded",
  );
  await expect(review.done).toContainText("Approved and executed: the provider applied it (re_");
  // The form is gone with the button that had the focus: the focus is on the answer, not on <body>.
  await expect(review.panel.getByTestId("decision-result")).toBeFocused();
  await expect(review.status).toHaveText("APPROVED");
  await expect(review.approvalsHeadline).toContainText("1 of 1 approval");

  // Exactly one refund, under the execution's own key.
  const refunds = await refundsForExecution(frozen.executionId);
  expect(refunds).toHaveLength(1);
  expect(refunds[0]?.idempotency_key).toBe(frozen.idempotencyKey);
  expect((await lookupAtProvider(frozen.idempotencyKey)).data).toHaveLength(1);

  expect((await getTaskVersion(request, frozen.task.id)).status).toBe("VALIDATING");
  const task = new TaskDetailPage(page);
  await task.goto(frozen.task.id);
  const effects = page.getByRole("region", { name: "External effects" });
  await expect(effects).toContainText("SUCCEEDED");
  await expect(effects).toContainText(frozen.idempotencyKey);
  await expect(effects.getByRole("link", { name: /^Review: approved/ })).toBeVisible();
  await page.screenshot({ path: `${shots}/task-ledger.png`, fullPage: true });
  await effects.screenshot({ path: `${shots}/ledger-card.png` });

  await completeValidatedTask(request, frozen.task);
  await task.goto(frozen.task.id);
  await expect(task.status).toHaveText("COMPLETED");
  expect(await refundsForExecution(frozen.executionId)).toHaveLength(1);
});

test("two operators decide at once: the second is told who decided first, sees the fresh state, and nothing is sent", async ({
  browser,
  request,
}) => {
  const frozen = await freezeRefund(request, { amountCents: 8_000 });
  const a = await openReviewAs(browser, "operator", frozen);
  const b = await openReviewAs(browser, "operator2", frozen);
  try {
    await expect(a.review.status).toHaveText("OPEN");
    await expect(b.review.status).toHaveText("OPEN");
    // Operator 2 still looks at the review as it was: no live refresh tells them otherwise.
    await b.review.pauseLiveUpdates();

    await a.review.decide("Reject", "duplicate request: the order was refunded by card reversal");
    await expect(a.review.done).toContainText("Rejected: nothing will be sent");
    await expect(a.review.status).toHaveText("REJECTED");

    await b.review.decide("Approve & execute", "customer still waiting for the money");
    await expect(b.review.alert).toContainText(
      "Another operator decided first (user/operator rejected) — here is the fresh state",
    );
    await expect(b.review.alert).toContainText("duplicate request: the order was refunded by card reversal");
    await expect(b.review.status).toHaveText("REJECTED");
    await expect(b.review.panel).toContainText("This review is decided (rejected)");
    await expect(b.review.approvals).toContainText("user/operator");
    await b.review.panel.scrollIntoViewIfNeeded();
    await b.page.screenshot({ path: `${shots}/review-conflict.png`, fullPage: true });

    expect(await refundsForExecution(frozen.executionId)).toHaveLength(0);
    expect(await getTaskVersion(request, frozen.task.id)).toMatchObject({ status: "CANCELLED" });
  } finally {
    await a.close();
    await b.close();
  }
});

test("four-eyes above the threshold: one approval keeps it open, the same operator cannot give the second, a second operator executes it", async ({
  browser,
  request,
}) => {
  const frozen = await freezeRefund(request, { amountCents: 75_000 });
  const first = await openReviewAs(browser, "operator", frozen);
  // The same operator in a second window, still showing the review before their approval.
  const again = await first.page.context().newPage();
  const stale = new ReviewDetailPage(again);
  await stale.goto(first.review.reviewId());
  await stale.pauseLiveUpdates();
  try {
    await expect(first.review.approvalsHeadline).toHaveText("0 of 2 approvals: needs 2 different operators");
    await expect(first.review.panel.getByTestId("final-approver")).toHaveCount(0);
    await first.review.decide("Approve & execute", "refund confirmed with the customer on the phone");
    await expect(first.review.done).toContainText(
      "Your approval is recorded (1 of 2 approvals: waiting for a second operator). Nothing was sent yet.",
    );
    await expect(first.review.status).toHaveText("OPEN");
    await expect(first.review.approvalsHeadline).toHaveText("1 of 2 approvals: waiting for a second operator");
    await expect(first.review.panel).toContainText(
      "You approved re-execution on this review. Nobody decides twice on one review: the second approval must come from a different operator.",
    );
    await expect(first.review.panel.getByRole("button")).toHaveCount(0);
    expect(await refundsForExecution(frozen.executionId)).toHaveLength(0);
    await first.page.screenshot({ path: `${shots}/review-four-eyes-pending.png`, fullPage: true });

    // Their second approval from the stale window is refused, in words.
    await stale.decide("Approve & execute", "approving again");
    await expect(stale.alert).toContainText(
      "You already decided on this review in another window (you approved re-execution)",
    );
    await expect(stale.approvalsHeadline).toHaveText("1 of 2 approvals: waiting for a second operator");

    const second = await openReviewAs(browser, "operator2", frozen);
    try {
      await expect(second.review.approvalsHeadline).toHaveText("1 of 2 approvals: waiting for a second operator");
      await expect(second.review.approvals).toContainText(
        "user/operator approved re-execution. Waiting for a second, different operator.",
      );
      // The second operator is told that theirs is the approval that sends the money.
      await expect(second.review.panel.getByTestId("final-approver")).toHaveText(
        "1 of 2 approvals are in. Your approval sends the $750.00 refund: Approve & execute sends it now, under the same key.",
      );
      // The server refuses the first operator's second approval even on the current version: their session posts operator 2's request.
      await second.review.reason.fill("second pair of eyes: amount and customer match the order");
      const action = await captureServerAction(second.page, () => second.review.button("Approve & execute").click());
      const replayed = await replayServerAction(first.page.request, action);
      expect(await replayed.text()).toContain(
        "Refused: you already decided in this round of the review. Four-eyes means a second approval must come from a different operator",
      );
      expect(await refundsForExecution(frozen.executionId)).toHaveLength(0);

      await second.review.decide("Approve & execute", "second pair of eyes: amount and customer match the order");
      await expect(second.review.done).toContainText("Approved and executed");
      await expect(second.review.status).toHaveText("APPROVED");
      await expect(second.review.approvalsHeadline).toHaveText("Approved · 2 of 2 approvals");
      await expect(second.review.approvals).toContainText(
        "Re-executed on the approval of user/operator and user/operator2.",
      );
    } finally {
      await second.close();
    }
    const refunds = await refundsForExecution(frozen.executionId);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]?.idempotency_key).toBe(frozen.idempotencyKey);
    expect((await getTaskVersion(request, frozen.task.id)).status).toBe("VALIDATING");
  } finally {
    await first.close();
  }
});

/**
 * Another request under the frozen refund's key, held in flight at the
 * provider and then not processed: a re-execution sent meanwhile is answered
 * "still being processed", an unknown outcome. Same parameters as the
 * refund's own request, so the provider takes it for the same call.
 */
async function holdKeyInFlight(frozen: FrozenRefund, ms: number): Promise<{ ended: Promise<number> }> {
  const refund = {
    amount_cents: frozen.amountCents,
    currency: "usd",
    charge_id: `ch_${frozen.task.id}`,
    customer_id: frozen.customerId,
  };
  const held = fetch(`${sandboxUrl}/v1/refunds`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": frozen.idempotencyKey,
      "X-Sandbox-Fault": `latency=${ms}, error_before_commit`,
    },
    body: JSON.stringify({ ...refund, metadata: { execution_id: frozen.executionId, task_id: frozen.task.id } }),
  }).then((r) => r.status);
  await expect
    .poll(async () => (await lookupAtProvider(frozen.idempotencyKey)).in_flight, { timeout: 5_000 })
    .toBe(true);
  return { ended: held };
}

test("a re-execution whose outcome is unknown reopens the review as round 2: the same operator decides again, decisions grouped by round", async ({
  page,
  request,
}) => {
  const frozen = await freezeRefund(request, { amountCents: 6_400 });
  await signIn(page, "operator", "/reviews");
  await new ReviewQueuePage(page).open(frozen.task.id);
  const review = new ReviewDetailPage(page);
  await expect(review.approvals).toContainText("No decisions yet.");
  const firstSent = await review.intendedCall
    .getByTestId("first-sent")
    .locator("time")
    .first()
    .getAttribute("datetime");

  const held = await holdKeyInFlight(frozen, 20_000);
  await review.decide("Approve & execute", "customer says the refund never arrived");
  await expect(review.done).toContainText("the outcome is unknown again. The review is open again");
  await expect(review.status).toHaveText("OPEN");
  const current = review.approvals.getByRole("region", { name: "Round 2 (current)" });
  const first = review.approvals.getByRole("region", { name: "Round 1" });
  await expect(current).toContainText("No decisions in this round yet.");
  await expect(first).toContainText("approved re-execution");
  await expect(first).toContainText("customer says the refund never arrived");
  await expect(review.approvalsHeadline).toHaveText("0 of 1 approval: needs one operator");
  await expect(page.locator(".page-header")).toContainText("reopened after an unknown outcome");
  // "First sent" is still the first send, not the re-send; the re-send is named beside it.
  const sent = review.intendedCall.getByTestId("first-sent");
  await expect(sent.locator("time").first()).toHaveAttribute("datetime", firstSent!);
  await expect(sent).toContainText("sent 2 times, last");
  await review.approvals.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/review-round-2.png`, fullPage: true });

  // The held request ends unprocessed; the same operator decides again in the new round.
  await releaseHeld(frozen.idempotencyKey);
  expect(await held.ended).toBe(503);
  await review.decide("Approve & execute", "the provider has nothing under the key now");
  await expect(review.done).toContainText("Approved and executed");
  await expect(review.status).toHaveText("APPROVED");
  await expect(current).toContainText("the provider has nothing under the key now");
  const refunds = await refundsForExecution(frozen.executionId);
  expect(refunds).toHaveLength(1);
  expect(refunds[0]?.idempotency_key).toBe(frozen.idempotencyKey);
});

test("an auditor sees the queue and the review read-only, and the server refuses their decision", async ({
  browser,
  page,
  request,
}) => {
  const frozen = await freezeRefund(request, { amountCents: 4_200 });
  await signIn(page, "auditor", "/reviews");
  const queue = new ReviewQueuePage(page);
  await expect(queue.readOnlyNotice).toContainText("your role (auditor) can see the queue");
  await expect(queue.row(frozen.task.id)).toContainText("$42.00");
  await queue.open(frozen.task.id);
  const review = new ReviewDetailPage(page);
  await expect(review.lookup).toContainText("Not found");
  await expect(review.readOnly).toContainText("Your role (auditor) can see this review");
  await expect(review.panel).toHaveCount(0);
  // No control that decides: the only buttons are the copy buttons beside the ids and the key.
  await expect(page.locator("main").getByRole("button", { name: /^(?!Copy )/ })).toHaveCount(0);

  // An operator's real decision request, posted with the auditor's session.
  const operator = await openReviewAs(browser, "operator", frozen);
  try {
    await operator.review.reason.fill("auditor must not be able to send this");
    const action = await captureServerAction(operator.page, () => operator.review.button("Approve & execute").click());
    const response = await replayServerAction(page.request, action);
    expect(response.ok()).toBe(true);
    expect(await response.text()).toContain("The auditor role does not have the tasks:transition permission");
  } finally {
    await operator.close();
  }
  await page.reload();
  await expect(review.status).toHaveText("OPEN");
  await expect(review.approvals).toContainText("No decisions yet.");
  expect(await refundsForExecution(frozen.executionId)).toHaveLength(0);
});

test("a refund the provider applied with another amount: the divergence shows both sides, approving is refused until an operator resolves it", async ({
  page,
  request,
}) => {
  const frozen = await freezeMismatchedRefund(request, { amountCents: 9_000, providerAmountCents: 9_900 });
  await signIn(page, "operator", `/tasks/${frozen.task.id}`);
  const effects = page.getByRole("region", { name: "External effects" });
  await expect(effects).toContainText("NEEDS_HUMAN");
  await expect(effects).toContainText("The provider's effect differs from what was asked");
  await expect(effects).toContainText("Verity says");
  await expect(effects).toContainText("The provider says");
  await effects.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${shots}/task-divergence.png`, fullPage: true });

  await expect(effects.getByRole("table")).toContainText("amount_cents90009900");
  await effects.locator(".divergence").screenshot({ path: `${shots}/divergence-card.png` });

  await effects.getByRole("link", { name: /^Open review/ }).click();
  await page.waitForURL(/\/reviews\/[^/]+$/);
  const review = new ReviewDetailPage(page);
  const reviewId = review.reviewId();
  await expect(review.lookup).toContainText("Found");
  await expect(review.lookup).toContainText("It does not match what Verity asked for: amount_cents");
  await expect(page.getByRole("region", { name: "An open divergence alert on this task" })).toContainText(
    "differs from the request in amount_cents",
  );
  await expect(review.button("Approve & execute")).toBeDisabled();
  await expect(review.panel).toContainText("Not now: the task has an open divergence alert");
  await page.screenshot({ path: `${shots}/review-with-divergence.png`, fullPage: true });

  await page.goto(`/tasks/${frozen.task.id}`);
  const resolve = effects.getByRole("button", { name: "Mark resolved" });
  await resolve.click();
  await expect(effects.getByRole("alert")).toContainText("Say how it was resolved");
  await effects
    .getByLabel("Resolution (required)")
    .fill("provider support confirmed the 99.00 refund is ours; the extra 9.00 is being recovered");
  await resolve.click();
  await expect(effects).toContainText("1 resolved divergence alert");
  await expect(effects.getByRole("button", { name: "Mark resolved" })).toHaveCount(0);
  await review.goto(reviewId);
  await expect(review.button("Approve & execute")).toBeEnabled();
  expect(await refundsForExecution(frozen.executionId)).toHaveLength(1);
});
