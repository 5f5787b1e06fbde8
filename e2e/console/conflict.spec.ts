import { expect, test } from "@playwright/test";
import { createRunningTask, getTaskVersion, listTransitionActors } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";
import { TaskDetailPage } from "../pages/task-detail-page";

test("two operators act on the same task: the second gets the conflict in words and the fresh state, nothing overwritten", async ({
  browser,
  request,
}) => {
  const task = await createRunningTask(request);
  const first = await browser.newContext();
  const second = await browser.newContext();
  try {
    const pageA = await first.newPage();
    const pageB = await second.newPage();
    await signIn(pageA, "operator", `/tasks/${task.id}`);
    await signIn(pageB, "operator2", `/tasks/${task.id}`);
    const a = new TaskDetailPage(pageA);
    const b = new TaskDetailPage(pageB);
    await expect(a.version).toHaveText("version 4");
    await expect(b.version).toHaveText("version 4");
    // Operator 2 is still looking at version 4: no live refresh tells them otherwise.
    await b.pauseLiveUpdates();

    await a.take("CANCELLED", "duplicate of another refund");
    await expect(a.status).toHaveText("CANCELLED");

    await b.take("CANCELLED", "customer asked to stop");
    await expect(b.alert).toContainText(
      "Someone else changed this task (now version 5) — here is the fresh state; nothing was overwritten.",
    );
    await expect(b.status).toHaveText("CANCELLED");
    await expect(b.version).toHaveText("version 5");
    await expect(b.timelineItems.first()).toContainText("spiffe://verity.local/user/operator");
    await expect(b.timelineItems.first()).toContainText("duplicate of another refund");
    await expect(b.reason).toHaveCount(0);

    expect(await getTaskVersion(request, task.id)).toEqual({ version: 5, status: "CANCELLED" });
    const cancels = (await listTransitionActors(request, task.id)).filter((t) => t.to_status === "CANCELLED");
    expect(cancels).toEqual([
      { to_status: "CANCELLED", actor: "spiffe://verity.local/user/operator", reason: "duplicate of another refund" },
    ]);
  } finally {
    await first.close();
    await second.close();
  }
});
