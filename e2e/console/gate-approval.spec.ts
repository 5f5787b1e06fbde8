import { expect, test } from "@playwright/test";
import { demoAgent } from "@/lib/config/demo-accounts";
import { createTask, transition } from "../pages/agent-seed";
import { signIn } from "../pages/login-page";

/**
 * Human gates in the browser (issue 11): an agent's patch setting
 * security_approved is a 403 naming the rule; an engineer approves it on the
 * task's page with a reason, and the timeline says who and why.
 */
test("an agent cannot approve security; an engineer does, through the Approvals card, with a reason", async ({
  page,
  request,
}) => {
  let task = await createTask(request, { workflow: "delivery" });
  for (const step of [
    { patch: { gates: { plan_approved: true } } },
    { to: "implementing" },
    { patch: { gates: { implementation_complete: true } } },
    { to: "reviewing" },
    { patch: { gates: { review_passed: true } } },
    { to: "testing" },
    { patch: { gates: { tests_passing: true } } },
  ])
    task = await transition(request, task, step);

  const refused = await request.post(`/api/v1/tasks/${encodeURIComponent(task.id)}/transitions`, {
    data: { expected_version: task.version, patch: { gates: { security_approved: true } } },
    headers: { Authorization: `Bearer ${demoAgent.token}` },
  });
  expect(refused.status()).toBe(403);
  expect(refused.headers()["content-type"]).toContain("application/problem+json");
  expect(JSON.stringify(await refused.json())).toContain("engineer or admin");

  await signIn(page, "engineer", `/tasks/${encodeURIComponent(task.id)}`);
  const card = page.getByRole("region", { name: "Approvals" });
  await expect(card).toContainText("security_approved");
  const form = card.getByRole("form", { name: "Approve security_approved" });
  await form.getByRole("button", { name: "Approve security_approved" }).click();
  await expect(form.getByRole("alert")).toContainText("Say why you approve");
  await form.getByLabel(/Reason for approving security_approved/).fill("threat model reviewed");
  await form.getByRole("button", { name: "Approve security_approved" }).click();
  await expect(card).toContainText("approved by spiffe://verity.local/user/engineer", { timeout: 60_000 });
  // An engineer may not approve the deployment: no form for it.
  await expect(card.getByRole("form", { name: "Approve deployment_approved" })).toHaveCount(0);
});
