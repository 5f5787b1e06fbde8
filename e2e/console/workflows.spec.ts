import { expect, test } from "@playwright/test";
import { signIn } from "../pages/login-page";

test("the workflows page shows each definition with its digest, graph and edge table", async ({ page }) => {
  await signIn(page, "engineer", "/workflows");
  // Every shipped version stays listed: tasks pinned to an old digest still run under it.
  for (const [name, version] of [
    ["agent-task", 1],
    ["agent-task", 2],
    ["delivery", 1],
  ] as const) {
    const card = page.getByRole("region", { name: new RegExp(`${name} v${version}`) });
    await expect(card.getByRole("img", { name: `State machine of ${name} v${version}` })).toBeVisible();
    await expect(card).toContainText("sha256:");
    await expect(card.getByRole("table", { name: `Transitions of ${name} v${version}` })).toBeVisible();
  }
  const agentTask = page.getByRole("region", { name: /agent-task v1/ });
  const resolve = agentTask.getByRole("row", { name: /WAITING_FOR_HUMAN HUMAN_RESOLVED/ });
  await expect(resolve).toContainText("person");
  await expect(agentTask.getByRole("table", { name: /Transitions refused on purpose/ })).toContainText(
    "completion_requires_validation",
  );
});
